"""The MindSpore DCGAN tutorial (docs: tutorials/application/source_en/generative/dcgan.md),
its code as written at a small size (feature maps 8, batch 8, 2 epochs) on 16 generated
96x96 PNG "faces" it writes into ./faces/faces (the tutorial downloads 70,171 JPEGs).

Changed so that two frameworks can be compared: seeds are set; the generator's noise is
drawn by numpy and passed to train_step (the tutorial draws ops.standard_normal inside
generator_forward: irc's draws are not MindSpore's Philox streams); every step is printed
with 7 digits.  The rest is the tutorial's: ImageFolderDataset + Resize + CenterCrop +
HWC2CHW + a lambda, Conv2dTranspose / BatchNorm2d generator, Conv2d / LeakyReLU / BatchNorm2d
discriminator called three times a step (once in the generator's gradient), BCELoss, two Adam
optimizers renamed by update_parameters_name, value_and_grad with has_aux, one @jit step
running both updates, save_checkpoint / load_checkpoint.

Run by MindSpore 2.10 to make dcgan_tutorial.mindspore.txt; tests/test_user_models.py runs
it under irc."""
import os

import numpy as np
from PIL import Image

rng = np.random.default_rng(0)
os.makedirs("faces/faces", exist_ok=True)
for k in range(16):
    face = np.full((96, 96, 3), rng.integers(0, 256, 3), np.float64)
    y, x = np.ogrid[:96, :96]
    cy, cx, r = rng.integers(30, 66, 2).tolist() + [int(rng.integers(15, 30))]
    face[(y - cy) ** 2 + (x - cx) ** 2 < r * r] = rng.integers(0, 256, 3)
    face += rng.normal(0, 10, face.shape)
    Image.fromarray(np.clip(face, 0, 255).astype(np.uint8)).save(f"faces/faces/{k}.png")

batch_size = 8            # Batch size
image_size = 64           # Size of the training image
nc = 3                    # Number of color channels
nz = 100                  # Length of the implicit vector
ngf = 8                   # Size of the feature map in the generator
ndf = 8                   # Size of the feature map in the discriminator
num_epochs = 2            # Number of training epochs
lr = 0.0002               # Learning rate
beta1 = 0.5               # Beta 1 hyperparameter of the Adam optimizer

import mindspore.dataset as ds
import mindspore.dataset.vision as vision

import mindspore
mindspore.set_seed(1)
np.random.seed(1)
ds.config.set_seed(1)


def create_dataset_imagenet(dataset_path):
    """Data loading"""
    dataset = ds.ImageFolderDataset(dataset_path,
                                    num_parallel_workers=2,
                                    shuffle=True,
                                    decode=True)

    # Data augmentation
    transforms = [
        vision.Resize(image_size),
        vision.CenterCrop(image_size),
        vision.HWC2CHW(),
        lambda x: ((x / 255).astype("float32"))
    ]

    # Data mapping
    dataset = dataset.project('image')
    dataset = dataset.map(transforms, 'image')

    # Batch operation
    dataset = dataset.batch(batch_size)
    return dataset


dataset = create_dataset_imagenet('./faces')

import mindspore as ms
from mindspore import nn, ops
from mindspore.common.initializer import Normal

weight_init = Normal(mean=0, sigma=0.02)
gamma_init = Normal(mean=1, sigma=0.02)


class Generator(nn.Cell):
    """DCGAN Network Generator"""

    def __init__(self):
        super(Generator, self).__init__()
        self.generator = nn.SequentialCell(
            nn.Conv2dTranspose(nz, ngf * 8, 4, 1, 'valid', weight_init=weight_init),
            nn.BatchNorm2d(ngf * 8, gamma_init=gamma_init),
            nn.ReLU(),
            nn.Conv2dTranspose(ngf * 8, ngf * 4, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf * 4, gamma_init=gamma_init),
            nn.ReLU(),
            nn.Conv2dTranspose(ngf * 4, ngf * 2, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf * 2, gamma_init=gamma_init),
            nn.ReLU(),
            nn.Conv2dTranspose(ngf * 2, ngf, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf, gamma_init=gamma_init),
            nn.ReLU(),
            nn.Conv2dTranspose(ngf, nc, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.Tanh()
            )

    def construct(self, x):
        return self.generator(x)


generator = Generator()


class Discriminator(nn.Cell):
    """DCGAN discriminator"""

    def __init__(self):
        super(Discriminator, self).__init__()
        self.discriminator = nn.SequentialCell(
            nn.Conv2d(nc, ndf, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf * 2, gamma_init=gamma_init),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf * 4, gamma_init=gamma_init),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 'pad', 1, weight_init=weight_init),
            nn.BatchNorm2d(ngf * 8, gamma_init=gamma_init),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf * 8, 1, 4, 1, 'valid', weight_init=weight_init),
            )
        self.adv_layer = nn.Sigmoid()

    def construct(self, x):
        out = self.discriminator(x)
        out = out.reshape(out.shape[0], -1)
        return self.adv_layer(out)


discriminator = Discriminator()

# Define loss function
adversarial_loss = nn.BCELoss(reduction='mean')

# Set optimizers for the generator and discriminator, respectively.
optimizer_D = nn.Adam(discriminator.trainable_params(), learning_rate=lr, beta1=beta1)
optimizer_G = nn.Adam(generator.trainable_params(), learning_rate=lr, beta1=beta1)
optimizer_G.update_parameters_name('optim_g.')
optimizer_D.update_parameters_name('optim_d.')


def generator_forward(real_imgs, valid, z):
    # Generate a batch of images
    gen_imgs = generator(z)

    # Loss measures generator's ability to fool the discriminator
    g_loss = adversarial_loss(discriminator(gen_imgs), valid)

    return g_loss, gen_imgs


def discriminator_forward(real_imgs, gen_imgs, valid, fake):
    # Measure discriminator's ability to classify real from generated samples
    real_loss = adversarial_loss(discriminator(real_imgs), valid)
    fake_loss = adversarial_loss(discriminator(gen_imgs), fake)
    d_loss = (real_loss + fake_loss) / 2
    return d_loss


grad_generator_fn = ms.value_and_grad(generator_forward, None,
                                      optimizer_G.parameters,
                                      has_aux=True)
grad_discriminator_fn = ms.value_and_grad(discriminator_forward, None,
                                          optimizer_D.parameters)


@ms.jit
def train_step(imgs, z):
    valid = ops.ones((imgs.shape[0], 1), mindspore.float32)
    fake = ops.zeros((imgs.shape[0], 1), mindspore.float32)

    (g_loss, gen_imgs), g_grads = grad_generator_fn(imgs, valid, z)
    optimizer_G(g_grads)
    d_loss, d_grads = grad_discriminator_fn(imgs, gen_imgs, valid, fake)
    optimizer_D(d_grads)

    return g_loss, d_loss, gen_imgs


noise = np.random.default_rng(5)
G_losses = []
D_losses = []
image_list = []

total = dataset.get_dataset_size()
for epoch in range(num_epochs):
    generator.set_train()
    discriminator.set_train()
    # Read in data for each training round
    for i, (imgs, ) in enumerate(dataset.create_tuple_iterator()):
        z = ms.Tensor(noise.standard_normal((imgs.shape[0], nz, 1, 1)).astype(np.float32))
        g_loss, d_loss, gen_imgs = train_step(imgs, z)
        print('[%2d/%d][%3d/%d]   Loss_D:%.7f  Loss_G:%.7f' % (
            epoch + 1, num_epochs, i + 1, total, d_loss.asnumpy(), g_loss.asnumpy()))
        D_losses.append(d_loss.asnumpy())
        G_losses.append(g_loss.asnumpy())

    # After each epoch, use the generator to generate a set of images
    generator.set_train(False)
    fixed_noise = ms.Tensor(noise.standard_normal((batch_size, nz, 1, 1)).astype(np.float32))
    img = generator(fixed_noise)
    image_list.append(img.transpose(0, 2, 3, 1).asnumpy())

    # Save the network model parameters as a ckpt file
    mindspore.save_checkpoint(generator, "./generator.ckpt")
    mindspore.save_checkpoint(discriminator, "./discriminator.ckpt")

print("images", float(np.abs(image_list[-1]).sum()))
for net in (generator, discriminator):
    print("weights", type(net).__name__, float(sum(np.abs(p.asnumpy()).sum() for p in net.trainable_params())))
    print("statistics", type(net).__name__, float(sum(np.abs(p.asnumpy()).sum() for p in net.untrainable_params())))

# Get the model parameters from the file and load them into the network
mindspore.load_checkpoint("./generator.ckpt", generator)
names = sorted(mindspore.load_checkpoint("./generator.ckpt"))
print("checkpoint", len(names), sum(n.startswith("optim_g.generator.") for n in names), names[-1])
fixed_noise = ms.Tensor(noise.standard_normal((batch_size, nz, 1, 1)).astype(np.float32))
img64 = generator(fixed_noise).transpose(0, 2, 3, 1).asnumpy()
print("generated", img64.shape, float(np.abs(img64).sum()))
