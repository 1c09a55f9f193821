"""The one validator of sampling settings (validation.check_sampling over SamplingParams.validate),
which the gRPC face and the HTTP faces call; tests/inference/http and test_bad_input check the faces'
statuses."""

from __future__ import annotations

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.config import SamplingParams
from inference.server.validation import RequestError, check_sampling, sampling_params


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (SamplingParams(max_tokens=-5), "sampling.max_tokens must be at least 1, got -5"),
        (SamplingParams(max_tokens=0), "sampling.max_tokens must be at least 1, got 0"),
        (SamplingParams(top_p=1.5), "sampling.top_p must be in (0, 1], got 1.5"),
        (SamplingParams(top_p=0.0), "sampling.top_p must be in (0, 1], got 0.0"),
        (
            SamplingParams(temperature=-1.0),
            "sampling.temperature must be a finite number >= 0 (0 is greedy), got -1.0",
        ),
        (SamplingParams(stop=("",)), "sampling.stop contains an empty string"),
    ],
)
def test_bad_sampling_is_one_request_error_naming_the_field(params: SamplingParams, message: str) -> None:
    with pytest.raises(RequestError) as raised:
        check_sampling(params)
    assert str(raised.value) == message


def test_good_sampling_passes_unchanged() -> None:
    params = SamplingParams(temperature=0.7, top_p=1.0, max_tokens=1, seed=3)
    assert check_sampling(params) is params


def test_the_proto_leaves_unset_fields_to_the_defaults() -> None:
    params = sampling_params(pb.SamplingParams(), default_tokens=77)
    assert (params.temperature, params.top_p, params.max_tokens, params.seed) == (0.0, 1.0, 77, None)
    with pytest.raises(RequestError) as raised:
        sampling_params(pb.SamplingParams(top_p=1.5), default_tokens=77)
    assert str(raised.value) == "sampling.top_p must be in (0, 1], got 1.5"
