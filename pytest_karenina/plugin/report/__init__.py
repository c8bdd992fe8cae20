"""What the plugin reports: the item payload, the run summary, JUnit properties, the
pytest-html columns and extras, and the replay store's usage."""
