"""Generated gRPC code for the wire API in protos/ (see inference.protogen)."""
