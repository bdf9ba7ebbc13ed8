"""The sequence-reversal project of lessons 07 and 08: one module per concern.

- :mod:`~course_utils.reversal.decoding`: the model contract (``Seq2Seq``), ``check_source``, ``greedy_decode``;
- :mod:`~course_utils.reversal.rnn`: lesson 07's additive attention and GRU encoder-decoders;
- :mod:`~course_utils.reversal.transformer`: lesson 08's pre-norm Transformer encoder-decoder;
- :mod:`~course_utils.reversal.training`: ``train_step``, ``train``, ``evaluate`` (knows only the contract);
- :mod:`~course_utils.reversal.checkpoints`: ``build_model``, ``PRETRAINED``, save and load, the CLI;
- :mod:`~course_utils.reversal.plots`: accuracy against length;
- :mod:`~course_utils.reversal.views`: the attention explorer on any reversal model (``explore_seq2seq``).

The task's data (vocabulary, splits, batches) stays in :mod:`course_utils.data`. Imports point one way:
``decoding`` needs only ``data``; ``rnn`` and ``transformer`` need ``decoding``, ``attention`` and ``masks``;
``training`` needs ``decoding`` and ``data``; ``checkpoints`` needs the models and ``training``; ``views`` needs
``decoding``, ``data`` and the generic ``explorer``, never a model; nothing in ``course_utils`` imports ``plots``
or ``views``. Nothing is imported here: import the modules by name.
"""

__all__ = ["decoding", "rnn", "transformer", "training", "checkpoints", "plots", "views"]
