"""Sync between machines: three-way reconciliation against a folder or S3 remote."""
