"""The test suite, by feature; shared helpers in :mod:`tests.support`."""
