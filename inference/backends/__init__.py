"""What the daemon serves from, behind one protocol: its own engine or a remote OpenAI-compatible one.

protocol        `InferenceBackend`, the narrow interface the servicer drives
served_model    `ServedModel`: a backend with its tokenizer, prompt templates, limits and ModelInfo
model_facts     the ModelInfo facts every backend reports (reply limits, characters per token)
local_engine    `EngineBackend`, the own engine (torch) behind the protocol
local_model     loading the own model pair into a `ServedModel`

openai_stream   one streamed call to an OpenAI-compatible engine: the pooled session, SSE events,
                and the engine's HTTP errors as gRPC statuses
openai_remote   `OpenAIRemoteBackend`, the servicer's `InferenceBackend` over that engine
remote_model    the `ServedModel` for a remote engine: its tokenizer, prompt templates and limits
"""
