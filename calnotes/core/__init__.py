"""The core measures and scores: what a reader of the book computes."""
