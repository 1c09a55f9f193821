from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SpeculationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPECULATION_MODE_UNSPECIFIED: _ClassVar[SpeculationMode]
    SPECULATION_MODE_AUTO: _ClassVar[SpeculationMode]
    SPECULATION_MODE_OFF: _ClassVar[SpeculationMode]
    SPECULATION_MODE_NGRAM: _ClassVar[SpeculationMode]
    SPECULATION_MODE_DRAFT: _ClassVar[SpeculationMode]

class FinishReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISH_REASON_UNSPECIFIED: _ClassVar[FinishReason]
    FINISH_REASON_STOP: _ClassVar[FinishReason]
    FINISH_REASON_LENGTH: _ClassVar[FinishReason]
    FINISH_REASON_EOS: _ClassVar[FinishReason]
    FINISH_REASON_CANCELLED: _ClassVar[FinishReason]
    FINISH_REASON_ERROR: _ClassVar[FinishReason]
    FINISH_REASON_REPETITION: _ClassVar[FinishReason]

class TruncationPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRUNCATION_POLICY_UNSPECIFIED: _ClassVar[TruncationPolicy]
    TRUNCATION_POLICY_KEEP_NEAR_CURSOR: _ClassVar[TruncationPolicy]
    TRUNCATION_POLICY_REJECT: _ClassVar[TruncationPolicy]
SPECULATION_MODE_UNSPECIFIED: SpeculationMode
SPECULATION_MODE_AUTO: SpeculationMode
SPECULATION_MODE_OFF: SpeculationMode
SPECULATION_MODE_NGRAM: SpeculationMode
SPECULATION_MODE_DRAFT: SpeculationMode
FINISH_REASON_UNSPECIFIED: FinishReason
FINISH_REASON_STOP: FinishReason
FINISH_REASON_LENGTH: FinishReason
FINISH_REASON_EOS: FinishReason
FINISH_REASON_CANCELLED: FinishReason
FINISH_REASON_ERROR: FinishReason
FINISH_REASON_REPETITION: FinishReason
TRUNCATION_POLICY_UNSPECIFIED: TruncationPolicy
TRUNCATION_POLICY_KEEP_NEAR_CURSOR: TruncationPolicy
TRUNCATION_POLICY_REJECT: TruncationPolicy

class SamplingParams(_message.Message):
    __slots__ = ("temperature", "top_p", "seed", "max_tokens", "stop")
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    top_p: float
    seed: int
    max_tokens: int
    stop: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., seed: _Optional[int] = ..., max_tokens: _Optional[int] = ..., stop: _Optional[_Iterable[str]] = ...) -> None: ...

class ContextSnippet(_message.Message):
    __slots__ = ("path", "text", "score", "source", "start_line")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    path: str
    text: str
    score: float
    source: str
    start_line: int
    def __init__(self, path: _Optional[str] = ..., text: _Optional[str] = ..., score: _Optional[float] = ..., source: _Optional[str] = ..., start_line: _Optional[int] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ("request_id", "session_id", "prefix", "suffix", "path", "language", "snippets", "sampling", "speculation", "truncation", "token_healing")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    SUFFIX_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    SNIPPETS_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    SPECULATION_FIELD_NUMBER: _ClassVar[int]
    TRUNCATION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_HEALING_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    session_id: str
    prefix: str
    suffix: str
    path: str
    language: str
    snippets: _containers.RepeatedCompositeFieldContainer[ContextSnippet]
    sampling: SamplingParams
    speculation: SpeculationMode
    truncation: TruncationPolicy
    token_healing: bool
    def __init__(self, request_id: _Optional[str] = ..., session_id: _Optional[str] = ..., prefix: _Optional[str] = ..., suffix: _Optional[str] = ..., path: _Optional[str] = ..., language: _Optional[str] = ..., snippets: _Optional[_Iterable[_Union[ContextSnippet, _Mapping]]] = ..., sampling: _Optional[_Union[SamplingParams, _Mapping]] = ..., speculation: _Optional[_Union[SpeculationMode, str]] = ..., truncation: _Optional[_Union[TruncationPolicy, str]] = ..., token_healing: _Optional[bool] = ...) -> None: ...

class ChatMessage(_message.Message):
    __slots__ = ("role", "content")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    role: str
    content: str
    def __init__(self, role: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class ChatMessages(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ChatMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[ChatMessage, _Mapping]]] = ...) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ("request_id", "session_id", "chat", "prompt", "sampling", "speculation", "truncation")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CHAT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    SPECULATION_FIELD_NUMBER: _ClassVar[int]
    TRUNCATION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    session_id: str
    chat: ChatMessages
    prompt: str
    sampling: SamplingParams
    speculation: SpeculationMode
    truncation: TruncationPolicy
    def __init__(self, request_id: _Optional[str] = ..., session_id: _Optional[str] = ..., chat: _Optional[_Union[ChatMessages, _Mapping]] = ..., prompt: _Optional[str] = ..., sampling: _Optional[_Union[SamplingParams, _Mapping]] = ..., speculation: _Optional[_Union[SpeculationMode, str]] = ..., truncation: _Optional[_Union[TruncationPolicy, str]] = ...) -> None: ...

class RequestFigures(_message.Message):
    __slots__ = ("prompt_tokens", "reused_tokens", "computed_tokens", "generated_tokens", "time_to_first_token_ms", "decode_tokens_per_second", "draft_proposed", "draft_accepted", "target_forward_passes", "truncated_tokens", "total_ms", "max_tokens_clamped_to", "lines", "first_token_logprob")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REUSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    GENERATED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_FIRST_TOKEN_MS_FIELD_NUMBER: _ClassVar[int]
    DECODE_TOKENS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    DRAFT_PROPOSED_FIELD_NUMBER: _ClassVar[int]
    DRAFT_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    TARGET_FORWARD_PASSES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_CLAMPED_TO_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    FIRST_TOKEN_LOGPROB_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    reused_tokens: int
    computed_tokens: int
    generated_tokens: int
    time_to_first_token_ms: float
    decode_tokens_per_second: float
    draft_proposed: int
    draft_accepted: int
    target_forward_passes: int
    truncated_tokens: int
    total_ms: float
    max_tokens_clamped_to: int
    lines: _containers.RepeatedCompositeFieldContainer[LineConfidence]
    first_token_logprob: float
    def __init__(self, prompt_tokens: _Optional[int] = ..., reused_tokens: _Optional[int] = ..., computed_tokens: _Optional[int] = ..., generated_tokens: _Optional[int] = ..., time_to_first_token_ms: _Optional[float] = ..., decode_tokens_per_second: _Optional[float] = ..., draft_proposed: _Optional[int] = ..., draft_accepted: _Optional[int] = ..., target_forward_passes: _Optional[int] = ..., truncated_tokens: _Optional[int] = ..., total_ms: _Optional[float] = ..., max_tokens_clamped_to: _Optional[int] = ..., lines: _Optional[_Iterable[_Union[LineConfidence, _Mapping]]] = ..., first_token_logprob: _Optional[float] = ...) -> None: ...

class LineConfidence(_message.Message):
    __slots__ = ("tokens", "mean_logprob", "min_logprob")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    MEAN_LOGPROB_FIELD_NUMBER: _ClassVar[int]
    MIN_LOGPROB_FIELD_NUMBER: _ClassVar[int]
    tokens: int
    mean_logprob: float
    min_logprob: float
    def __init__(self, tokens: _Optional[int] = ..., mean_logprob: _Optional[float] = ..., min_logprob: _Optional[float] = ...) -> None: ...

class CompleteChunk(_message.Message):
    __slots__ = ("request_id", "text_delta", "done", "finish_reason", "figures")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    text_delta: str
    done: bool
    finish_reason: FinishReason
    figures: RequestFigures
    def __init__(self, request_id: _Optional[str] = ..., text_delta: _Optional[str] = ..., done: _Optional[bool] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., figures: _Optional[_Union[RequestFigures, _Mapping]] = ...) -> None: ...

class GenerateChunk(_message.Message):
    __slots__ = ("request_id", "text_delta", "done", "finish_reason", "figures")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    text_delta: str
    done: bool
    finish_reason: FinishReason
    figures: RequestFigures
    def __init__(self, request_id: _Optional[str] = ..., text_delta: _Optional[str] = ..., done: _Optional[bool] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., figures: _Optional[_Union[RequestFigures, _Mapping]] = ...) -> None: ...

class PrefillResponse(_message.Message):
    __slots__ = ("request_id", "prefilled", "skipped", "figures")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PREFILLED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    prefilled: bool
    skipped: str
    figures: RequestFigures
    def __init__(self, request_id: _Optional[str] = ..., prefilled: _Optional[bool] = ..., skipped: _Optional[str] = ..., figures: _Optional[_Union[RequestFigures, _Mapping]] = ...) -> None: ...

class EditHunk(_message.Message):
    __slots__ = ("original", "updated")
    ORIGINAL_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    original: str
    updated: str
    def __init__(self, original: _Optional[str] = ..., updated: _Optional[str] = ...) -> None: ...

class PastEdit(_message.Message):
    __slots__ = ("path", "diff", "hunks")
    PATH_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    HUNKS_FIELD_NUMBER: _ClassVar[int]
    path: str
    diff: str
    hunks: _containers.RepeatedCompositeFieldContainer[EditHunk]
    def __init__(self, path: _Optional[str] = ..., diff: _Optional[str] = ..., hunks: _Optional[_Iterable[_Union[EditHunk, _Mapping]]] = ...) -> None: ...

class PredictEditRequest(_message.Message):
    __slots__ = ("request_id", "session_id", "path", "language", "region", "cursor", "original_region", "context_before", "context_after", "starts_file", "history", "snippets", "sampling", "speculation")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_REGION_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_AFTER_FIELD_NUMBER: _ClassVar[int]
    STARTS_FILE_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    SNIPPETS_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    SPECULATION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    session_id: str
    path: str
    language: str
    region: str
    cursor: int
    original_region: str
    context_before: str
    context_after: str
    starts_file: bool
    history: _containers.RepeatedCompositeFieldContainer[PastEdit]
    snippets: _containers.RepeatedCompositeFieldContainer[ContextSnippet]
    sampling: SamplingParams
    speculation: SpeculationMode
    def __init__(self, request_id: _Optional[str] = ..., session_id: _Optional[str] = ..., path: _Optional[str] = ..., language: _Optional[str] = ..., region: _Optional[str] = ..., cursor: _Optional[int] = ..., original_region: _Optional[str] = ..., context_before: _Optional[str] = ..., context_after: _Optional[str] = ..., starts_file: _Optional[bool] = ..., history: _Optional[_Iterable[_Union[PastEdit, _Mapping]]] = ..., snippets: _Optional[_Iterable[_Union[ContextSnippet, _Mapping]]] = ..., sampling: _Optional[_Union[SamplingParams, _Mapping]] = ..., speculation: _Optional[_Union[SpeculationMode, str]] = ...) -> None: ...

class PredictEditReply(_message.Message):
    __slots__ = ("request_id", "format", "parsed", "rewritten_region", "finish_reason", "figures")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    PARSED_FIELD_NUMBER: _ClassVar[int]
    REWRITTEN_REGION_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    format: str
    parsed: bool
    rewritten_region: str
    finish_reason: FinishReason
    figures: RequestFigures
    def __init__(self, request_id: _Optional[str] = ..., format: _Optional[str] = ..., parsed: _Optional[bool] = ..., rewritten_region: _Optional[str] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., figures: _Optional[_Union[RequestFigures, _Mapping]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    def __init__(self, request_id: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("cancelled",)
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    def __init__(self, cancelled: _Optional[bool] = ...) -> None: ...

class GetModelInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelDescription(_message.Message):
    __slots__ = ("name", "path", "architecture", "parameters", "context_length", "vocab_size")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    ARCHITECTURE_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    VOCAB_SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    path: str
    architecture: str
    parameters: int
    context_length: int
    vocab_size: int
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ..., architecture: _Optional[str] = ..., parameters: _Optional[int] = ..., context_length: _Optional[int] = ..., vocab_size: _Optional[int] = ...) -> None: ...

class ModelInfo(_message.Message):
    __slots__ = ("model", "draft_model", "has_draft_model", "device", "dtype", "fim_template", "fim_spm", "has_chat_template", "kv_block_size", "kv_blocks_total", "max_new_tokens", "max_request_bytes", "version", "supports_tools", "prefix_only", "default_completion_tokens", "reply_reserve_limit", "chars_per_token", "next_edit_format", "chat_model", "routes")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DRAFT_MODEL_FIELD_NUMBER: _ClassVar[int]
    HAS_DRAFT_MODEL_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    FIM_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    FIM_SPM_FIELD_NUMBER: _ClassVar[int]
    HAS_CHAT_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    KV_BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    KV_BLOCKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    MAX_NEW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_REQUEST_BYTES_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_TOOLS_FIELD_NUMBER: _ClassVar[int]
    PREFIX_ONLY_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REPLY_RESERVE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    CHARS_PER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEXT_EDIT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    CHAT_MODEL_FIELD_NUMBER: _ClassVar[int]
    ROUTES_FIELD_NUMBER: _ClassVar[int]
    model: ModelDescription
    draft_model: ModelDescription
    has_draft_model: bool
    device: str
    dtype: str
    fim_template: str
    fim_spm: bool
    has_chat_template: bool
    kv_block_size: int
    kv_blocks_total: int
    max_new_tokens: int
    max_request_bytes: int
    version: str
    supports_tools: bool
    prefix_only: bool
    default_completion_tokens: int
    reply_reserve_limit: int
    chars_per_token: float
    next_edit_format: str
    chat_model: ModelInfo
    routes: _containers.RepeatedCompositeFieldContainer[TaskRoute]
    def __init__(self, model: _Optional[_Union[ModelDescription, _Mapping]] = ..., draft_model: _Optional[_Union[ModelDescription, _Mapping]] = ..., has_draft_model: _Optional[bool] = ..., device: _Optional[str] = ..., dtype: _Optional[str] = ..., fim_template: _Optional[str] = ..., fim_spm: _Optional[bool] = ..., has_chat_template: _Optional[bool] = ..., kv_block_size: _Optional[int] = ..., kv_blocks_total: _Optional[int] = ..., max_new_tokens: _Optional[int] = ..., max_request_bytes: _Optional[int] = ..., version: _Optional[str] = ..., supports_tools: _Optional[bool] = ..., prefix_only: _Optional[bool] = ..., default_completion_tokens: _Optional[int] = ..., reply_reserve_limit: _Optional[int] = ..., chars_per_token: _Optional[float] = ..., next_edit_format: _Optional[str] = ..., chat_model: _Optional[_Union[ModelInfo, _Mapping]] = ..., routes: _Optional[_Iterable[_Union[TaskRoute, _Mapping]]] = ...) -> None: ...

class TaskRoute(_message.Message):
    __slots__ = ("task", "served_by", "model_name")
    TASK_FIELD_NUMBER: _ClassVar[int]
    SERVED_BY_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    task: str
    served_by: str
    model_name: str
    def __init__(self, task: _Optional[str] = ..., served_by: _Optional[str] = ..., model_name: _Optional[str] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Stats(_message.Message):
    __slots__ = ("requests_total", "requests_finished", "requests_active", "queue_depth", "requests_cancelled", "cache_hit_requests", "prompt_tokens", "reused_tokens", "computed_tokens", "generated_tokens", "draft_proposed", "draft_accepted", "tokens_per_second", "kv_blocks_total", "kv_blocks_used", "kv_blocks_cached", "uptime_seconds", "preemptions", "kv_evictions", "models")
    REQUESTS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FINISHED_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REUSED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    GENERATED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DRAFT_PROPOSED_FIELD_NUMBER: _ClassVar[int]
    DRAFT_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    KV_BLOCKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    KV_BLOCKS_USED_FIELD_NUMBER: _ClassVar[int]
    KV_BLOCKS_CACHED_FIELD_NUMBER: _ClassVar[int]
    UPTIME_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PREEMPTIONS_FIELD_NUMBER: _ClassVar[int]
    KV_EVICTIONS_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    requests_total: int
    requests_finished: int
    requests_active: int
    queue_depth: int
    requests_cancelled: int
    cache_hit_requests: int
    prompt_tokens: int
    reused_tokens: int
    computed_tokens: int
    generated_tokens: int
    draft_proposed: int
    draft_accepted: int
    tokens_per_second: float
    kv_blocks_total: int
    kv_blocks_used: int
    kv_blocks_cached: int
    uptime_seconds: float
    preemptions: int
    kv_evictions: int
    models: _containers.RepeatedCompositeFieldContainer[ModelStats]
    def __init__(self, requests_total: _Optional[int] = ..., requests_finished: _Optional[int] = ..., requests_active: _Optional[int] = ..., queue_depth: _Optional[int] = ..., requests_cancelled: _Optional[int] = ..., cache_hit_requests: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., reused_tokens: _Optional[int] = ..., computed_tokens: _Optional[int] = ..., generated_tokens: _Optional[int] = ..., draft_proposed: _Optional[int] = ..., draft_accepted: _Optional[int] = ..., tokens_per_second: _Optional[float] = ..., kv_blocks_total: _Optional[int] = ..., kv_blocks_used: _Optional[int] = ..., kv_blocks_cached: _Optional[int] = ..., uptime_seconds: _Optional[float] = ..., preemptions: _Optional[int] = ..., kv_evictions: _Optional[int] = ..., models: _Optional[_Iterable[_Union[ModelStats, _Mapping]]] = ...) -> None: ...

class ModelStats(_message.Message):
    __slots__ = ("served_by", "model_name", "stats")
    SERVED_BY_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    served_by: str
    model_name: str
    stats: Stats
    def __init__(self, served_by: _Optional[str] = ..., model_name: _Optional[str] = ..., stats: _Optional[_Union[Stats, _Mapping]] = ...) -> None: ...
