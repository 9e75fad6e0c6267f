"""xlanb_runtime: turns an IR graph into fast code and runs it (the jaxlib of xlanb)."""
