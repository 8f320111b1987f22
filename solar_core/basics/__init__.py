"""The lowest layer: the values and checks every other layer shares; imports no other layer."""
