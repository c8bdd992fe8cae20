"""One item: its results -> outcomes, the vote of its replicates, and the text of why it
failed or errored."""
