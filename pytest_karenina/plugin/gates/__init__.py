"""One run: the checks that decide its exit status (pass rate, baseline, ...)."""
