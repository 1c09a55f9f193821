"""Model architectures (one module each) on the shared layers in `inference.layers`."""
