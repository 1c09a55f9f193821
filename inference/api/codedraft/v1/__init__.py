"""Generated from protos/ by inference.protogen; do not edit."""
