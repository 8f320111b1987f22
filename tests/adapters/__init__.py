"""Tests: adapters."""
