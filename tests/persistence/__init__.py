"""Tests: persistence."""
