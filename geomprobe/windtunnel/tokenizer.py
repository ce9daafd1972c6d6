"""A word-level Hugging Face tokenizer over a wind-tunnel task's vocabulary.

Text is split on whitespace, with the punctuation marks : , . ? ; also split off, so the
SULA surface form "w1: dax, w2: lug. q:" and its spaced form "w1 : dax , w2 : lug . q :"
tokenize the same. `<bos>` is prepended like Llama's BOS, so `tokenizer(task.to_text(row))`
reproduces the task's token ids exactly.
"""

from __future__ import annotations


def task_tokenizer(vocab: list[str]):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    table = {token: index for index, token in enumerate(vocab)}
    tok = Tokenizer(models.WordLevel(vocab=table, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Split(Regex(r"[:,.?;]"), behavior="isolated"),
    ])
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", table["<bos>"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<bos>", pad_token="<pad>",
                                   unk_token="<unk>")
