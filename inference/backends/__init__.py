"""Engines the daemon can serve from besides its own: a remote OpenAI-compatible engine.

openai_stream   one streamed call to an OpenAI-compatible engine: the pooled session, SSE events,
                and the engine's HTTP errors as gRPC statuses
openai_remote   `OpenAIRemoteBackend`, the servicer's `InferenceBackend` over that engine
remote_model    the `ServedModel` for a remote engine: its tokenizer, prompt templates and limits
"""
