"""Benchmarks del producto (``make bench``)."""
