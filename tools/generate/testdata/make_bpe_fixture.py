"""Writes the fixtures of tools/generate/bpe_tokenizer_test.cc with the
Hugging Face `tokenizers` library (the reference seqrt's reader must equal):

  gpt2_bpe.json        a byte-level BPE (GPT-2's pre-tokenizer, byte map and
                       decoder) trained on the paragraphs below, with the
                       special token <|endoftext|>
  gpt2_bpe_cases.json  [{"text": ..., "ids": [...], "decoded": ...}, ...]:
                       how the library encodes each case string, and
                       decodes the ids (special tokens skipped)
  gpt2_variant.json, gpt2_variant_cases.json
                       the same with add_prefix_space, an lstrip <mask>, a
                       single_word <sep> and ignore_merges
  llama_bpe.json, llama_bpe_cases.json
                       the same for a Llama-style BPE: the "▁" normalizer
                       (Prepend + Replace), byte_fallback, <s> prepended by
                       the post-processor
  llama_metaspace.json, llama_metaspace_cases.json
                       the same model with a Metaspace pre-tokenizer and
                       decoder instead of the normalizer

Run with the venv of scripts/test.sh (tokenizers 0.19):
  build/venv/bin/python tools/generate/testdata/make_bpe_fixture.py
The outputs are committed, so the C++ test needs no Python.
"""

import json
import pathlib

from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)
from tokenizers.implementations import ByteLevelBPETokenizer

HERE = pathlib.Path(__file__).resolve().parent

TRAINING_TEXT = [
    "The lighthouse keeper climbed the stairs at dusk, counting each of the "
    "one hundred and twelve steps as he had done for thirty years.",
    "Numbers like 1234, 56.78 and 9,000,001 appear in ledgers; the clerk "
    "writes them twice, once in ink and once in pencil.",
    "She said: \"Don't worry, we'll be there by 10 o'clock.\" He wasn't sure "
    "they'd make it, but I've learned to trust her.",
    "Tabs\tand  double  spaces,\nnew lines\n\nand blank ones keep a text "
    "honest about its whitespace.",
    "Café crème, naïve façade, über straße: accents travel in UTF-8 as two "
    "bytes each, and the tokenizer sees the bytes.",
    "日本語のテキストも少し含めます。中文也有一点。",
    "Emoji such as 🙂 and 🚀 are four bytes long; symbols like € and ™ are "
    "three.",
    "def greet(name):\n    return f'Hello, {name}!'  # a line of code\n",
]

CASES = [
    "", "Hello", "Hello world", "hello world!", " leading space",
    "trailing space ", "  two leading", "double  space", "triple   space",
    "tab\tseparated", "line\nbreak", "two\n\nbreaks", "\n", " ", "   ",
    "\t\n ", "end with newline\n", "1234567890", "12 345 6789",
    "3.14159", "9,000,001", "x=1+2*3", "a-b_c.d", "don't", "we'll",
    "I'm", "they'd", "you've", "she's", "DON'T", "it's 'quoted'",
    "\"double quoted\"", "(parens) [brackets] {braces}", "!!!???...",
    "héllo wörld", "Café crème", "naïve façade", "über straße", "ÀÉÎÕÜ",
    "日本語", "中文也有一点。", "テキスト", "Emoji 🙂🚀", "€100 ™",
    "mixed日本語and English", "Ελληνικά κείμενο", "Привет мир",
    "<|endoftext|>", "before<|endoftext|>after", "a <|endoftext|> b",
    "def f(x):\n    return x  # comment\n", "unknownwordzzqx",
    "Numbers 42 and letters abc42def",
    "x <mask> y", "x<mask>y", "x   <mask>   y", " <mask> ", "a <sep> b",
    "word<sep>word", "<sep>x",
]


def write_cases(tokenizer: Tokenizer, stem: str) -> None:
    tokenizer.save(str(HERE / f"{stem}.json"))
    lines = []
    for text in CASES:
        ids = tokenizer.encode(text).ids
        lines.append(json.dumps({"text": text, "ids": ids,
                                 "decoded": tokenizer.decode(ids)},
                                ensure_ascii=False))
    (HERE / f"{stem}_cases.json").write_text(
        "[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")


def gpt2_style() -> Tokenizer:
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TRAINING_TEXT * 4, vocab_size=600, min_frequency=2,
                            special_tokens=["<|endoftext|>"],
                            show_progress=False)
    return bpe._tokenizer


def gpt2_variant() -> Tokenizer:
    """GPT-2 style with the options real files use: a prefix space, an
    added <mask> that takes the spaces before it (RoBERTa), a single_word
    added token, and ignore_merges."""
    tokenizer = gpt2_style()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    tokenizer.add_tokens([AddedToken("<sep>", single_word=True,
                                     normalized=False)])
    file = json.loads(tokenizer.to_str())
    file["model"]["ignore_merges"] = True
    return Tokenizer.from_str(json.dumps(file))


def llama_style() -> Tokenizer:
    """As Llama 2's tokenizer.json: the 256 byte tokens <0x00>..<0xFF> are
    in the vocabulary (not added tokens), after <unk>, <s> and </s>."""
    trainer = trainers.BpeTrainer(vocab_size=440, min_frequency=2,
                                  show_progress=False)
    trained = Tokenizer(models.BPE())
    trained.normalizer = normalizers.Replace(" ", "▁")
    trained.train_from_iterator(["▁" + t for t in TRAINING_TEXT] * 4, trainer)
    learned = json.loads(trained.to_str())["model"]
    specials = ["<unk>", "<s>", "</s>"]
    tokens = specials + [f"<0x{b:02X}>" for b in range(256)]
    tokens += sorted(learned["vocab"], key=learned["vocab"].get)
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ")) for m in learned["merges"]]
    tokenizer = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>",
                                     byte_fallback=True, fuse_unk=True))
    tokenizer.add_special_tokens(specials)
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tokenizer.decoder = decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0)])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)])
    return tokenizer


def llama_metaspace() -> Tokenizer:
    """The same model with the newer Metaspace pre-tokenizer and decoder in
    place of the normalizer (prepend_scheme "first", no split)."""
    tokenizer = llama_style()
    tokenizer.normalizer = normalizers.Sequence([])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="first", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement="▁",
                                           prepend_scheme="first", split=False)
    return tokenizer


if __name__ == "__main__":
    write_cases(gpt2_style(), "gpt2_bpe")
    write_cases(gpt2_variant(), "gpt2_variant")
    write_cases(llama_style(), "llama_bpe")
    write_cases(llama_metaspace(), "llama_metaspace")
