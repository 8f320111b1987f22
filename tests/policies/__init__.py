"""Tests: policies."""
