"""How items get their results: the prefetcher that runs their pipelines ahead of pytest's
loop, the xdist partition and crash journals, the cost cap, pipeline log records, the status
line, the replay store's usage, the heap of large runs and signals."""
