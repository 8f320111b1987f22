"""What the framework adapters share (plain Python): building their memory, all-or-nothing
batch adds, the hits a prompt showed, the text of a dialogue turn."""
