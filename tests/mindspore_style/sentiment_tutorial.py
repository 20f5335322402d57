"""The MindSpore RNN sentiment tutorial (docs: tutorials/source_en/nlp/sentiment_analysis.md),
its code as written, on generated reviews and a small generated GloVe table (it downloads
IMDB and GloVe): GeneratorDataset of ragged token lists, text.Vocab.from_list, text.Lookup,
transforms.PadEnd, TypeCast, split([0.7, 0.3]), batch; an embedding + 2-layer bidirectional
LSTM trained functionally with Adam; its evaluation and predict_sentiment.

Run by MindSpore 2.10 to make sentiment_tutorial.mindspore.txt; tests/test_text.py runs it under irc."""
import math
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.common.initializer import Uniform, HeUniform

rng = np.random.default_rng(0)
WORDS = ["good", "great", "bad", "awful", "film", "movie", "the", "a", "plot", "actor", "fine", "boring"]


class IMDBData():
    label_map = {"pos": 1, "neg": 0}

    def __init__(self, n):
        self.docs, self.labels = [], []
        for _ in range(n):
            doc = list(rng.choice(WORDS + ["zzz"], rng.integers(3, 30)))
            self.docs.append(doc)
            self.labels.append([int(doc.count("good") + doc.count("great") > doc.count("bad") + doc.count("awful"))])

    def __getitem__(self, idx):
        return self.docs[idx], self.labels[idx]

    def __len__(self):
        return len(self.docs)


def load_imdb():
    imdb_train = ds.GeneratorDataset(IMDBData(200), column_names=["text", "label"], shuffle=True)
    imdb_test = ds.GeneratorDataset(IMDBData(64), column_names=["text", "label"], shuffle=False)
    return imdb_train, imdb_test


def load_glove():
    embeddings = [rng.normal(size=16).astype(np.float32) for _ in WORDS]
    tokens = list(WORDS)
    embeddings.append(np.random.rand(16))
    embeddings.append(np.zeros((16,), np.float32))
    vocab = ds.text.Vocab.from_list(tokens, special_tokens=["<unk>", "<pad>"], special_first=False)
    embeddings = np.array(embeddings).astype(np.float32)
    return vocab, embeddings


ms.set_seed(1)
imdb_train, imdb_test = load_imdb()
vocab, embeddings = load_glove()
print(len(vocab.vocab()), vocab.tokens_to_ids('the'), vocab.tokens_to_ids('<pad>'))
lookup_op = ds.text.Lookup(vocab, unknown_token='<unk>')
pad_op = ds.transforms.PadEnd([40], pad_value=vocab.tokens_to_ids('<pad>'))
type_cast_op = ds.transforms.TypeCast(ms.float32)
imdb_train = imdb_train.map(operations=[lookup_op, pad_op], input_columns=['text'])
imdb_train = imdb_train.map(operations=[type_cast_op], input_columns=['label'])
imdb_test = imdb_test.map(operations=[lookup_op, pad_op], input_columns=['text'])
imdb_test = imdb_test.map(operations=[type_cast_op], input_columns=['label'])
imdb_train, imdb_valid = imdb_train.split([0.7, 0.3])
imdb_train = imdb_train.batch(16, drop_remainder=True)
imdb_valid = imdb_valid.batch(16, drop_remainder=True)


class RNN(nn.Cell):
    def __init__(self, embeddings, hidden_dim, output_dim, n_layers, bidirectional, pad_idx):
        super().__init__()
        vocab_size, embedding_dim = embeddings.shape
        self.embedding = nn.Embedding(vocab_size, embedding_dim, embedding_table=ms.Tensor(embeddings),
                                      padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers, bidirectional=bidirectional,
                           batch_first=True)
        weight_init = HeUniform(math.sqrt(5))
        bias_init = Uniform(1 / math.sqrt(hidden_dim * 2))
        self.fc = nn.Dense(hidden_dim * 2, output_dim, weight_init=weight_init, bias_init=bias_init)

    def construct(self, inputs):
        embedded = self.embedding(inputs)
        _, (hidden, _) = self.rnn(embedded)
        hidden = ops.concat((hidden[-2, :, :], hidden[-1, :, :]), axis=1)
        output = self.fc(hidden)
        return output


hidden_size, output_size, num_layers, bidirectional, lr = 32, 1, 2, True, 0.01
pad_idx = vocab.tokens_to_ids('<pad>')
model = RNN(embeddings, hidden_size, output_size, num_layers, bidirectional, pad_idx)
loss_fn = nn.BCEWithLogitsLoss(reduction='mean')
optimizer = nn.Adam(model.trainable_params(), learning_rate=lr)


def forward_fn(data, label):
    logits = model(data)
    loss = loss_fn(logits, label)
    return loss


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)


def train_step(data, label):
    loss, grads = grad_fn(data, label)
    optimizer(grads)
    return loss


def train_one_epoch(model, train_dataset, epoch=0):
    model.set_train()
    total = train_dataset.get_dataset_size()
    loss_total = 0
    step_total = 0
    for i in train_dataset.create_tuple_iterator():
        loss = train_step(*i)
        loss_total += loss.asnumpy()
        step_total += 1
    print(f"epoch {epoch} steps {step_total}/{total} loss {loss_total / step_total:.7f}")


def binary_accuracy(preds, y):
    rounded_preds = np.around(ops.sigmoid(preds).asnumpy())
    correct = (rounded_preds == y).astype(np.float32)
    acc = correct.sum() / len(correct)
    return acc


def evaluate(model, test_dataset, criterion, epoch=0):
    total = test_dataset.get_dataset_size()
    epoch_loss = 0
    epoch_acc = 0
    model.set_train(False)
    for i in test_dataset.create_tuple_iterator():
        predictions = model(i[0])
        loss = criterion(predictions, i[1])
        epoch_loss += loss.asnumpy()
        acc = binary_accuracy(predictions, i[1])
        epoch_acc += acc
    print(f"eval {epoch}: loss {epoch_loss / total:.7f} acc {epoch_acc / total:.4f}")


for epoch in range(3):
    train_one_epoch(model, imdb_train, epoch)
    evaluate(model, imdb_valid, loss_fn, epoch)


def predict_sentiment(model, vocab, sentence):
    model.set_train(False)
    tokenized = sentence.lower().split()
    indexed = vocab.tokens_to_ids(tokenized)
    tensor = ms.Tensor(indexed, ms.int32)
    tensor = tensor.expand_dims(0)
    prediction = model(tensor)
    return float(ops.sigmoid(prediction).asnumpy()[0, 0])


print(f"{predict_sentiment(model, vocab, 'This film is great good'):.6f}")
