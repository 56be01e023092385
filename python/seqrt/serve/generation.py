"""Text generation for models whose metadata holds a character vocabulary
(`seqrt.tokenizer` = char, `seqrt.vocab` a JSON list; samples/demo): the
tokenizer, the sampler, and the loop over a seqrt.Stream."""

import json
from typing import Iterator, Optional

import numpy as np

from .codec import RequestError


class CharVocabulary:
    def __init__(self, chars):
        self.chars = list(chars)
        self.index = {c: i for i, c in enumerate(self.chars)}

    @staticmethod
    def of(session) -> Optional["CharVocabulary"]:
        """The session's vocabulary, or None when it has none."""
        metadata = session.metadata
        if metadata.get("seqrt.tokenizer") != "char" or \
                "seqrt.vocab" not in metadata:
            return None
        return CharVocabulary(json.loads(metadata["seqrt.vocab"]))

    def encode(self, text: str) -> np.ndarray:
        unknown = sorted({c for c in text if c not in self.index})
        if unknown:
            raise RequestError(f"the prompt has characters outside the "
                               f"model's vocabulary: {unknown}")
        return np.array([[self.index[c] for c in text]], dtype=np.int64)


def check_sampling(max_tokens, temperature, top_k, limit: int) -> None:
    if not isinstance(max_tokens, int) or not 0 < max_tokens <= limit:
        raise RequestError(f"max_tokens must be an integer in 1..{limit}, "
                           f"got {max_tokens!r}")
    if not isinstance(temperature, (int, float)) or temperature < 0:
        raise RequestError(f"temperature must be a number >= 0, got "
                           f"{temperature!r}")
    if not isinstance(top_k, int) or top_k < 0:
        raise RequestError(f"top_k must be an integer >= 0, got {top_k!r}")


def sample(logits: np.ndarray, temperature: float, top_k: int,
           rng: np.random.Generator) -> int:
    """Greedy at temperature 0; else softmax(logits / T) over the top k
    (k = 0: all)."""
    logits = logits.astype(np.float64)
    if temperature == 0:
        return int(np.argmax(logits))
    if 0 < top_k < logits.size:
        cut = np.partition(logits, -top_k)[-top_k]
        logits = np.where(logits >= cut, logits, -np.inf)
    weights = np.exp((logits - logits.max()) / temperature)
    return int(rng.choice(logits.size, p=weights / weights.sum()))


def generate(stream, vocabulary: CharVocabulary, input_name: str,
             logits_name: str, prompt: str, max_tokens: int,
             temperature: float, top_k: int,
             seed: Optional[int]) -> Iterator[str]:
    """Prefills the prompt, then yields one character per step."""
    rng = np.random.default_rng(seed)
    tokens = vocabulary.encode(prompt)
    if tokens.shape[1] == 0:
        raise RequestError("the prompt is empty")
    logits, = stream.prefill({input_name: tokens}, [logits_name])
    for _ in range(max_tokens):
        token = sample(logits[0, -1], temperature, top_k, rng)
        yield vocabulary.chars[token]
        logits, = stream.step(
            {input_name: np.array([[token]], dtype=np.int64)}, [logits_name])
