"""Small networks shared by the training tests."""
import irc.nn as nn


class Small(nn.Cell):
    """conv 3x3 -> relu -> pool 2 -> dense 3: a 1x8x8 input, 3 classes."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", weight_init="he_uniform")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(36, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.conv(x)))))
