import tensorflow as tf

from net import make_model
from pipeline import make_dataset

loss_fn = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.Adam(1e-3)


def train(model, dataset, epochs=2):
    for epoch in range(epochs):
        for x, y in dataset:
            predictions = model(x, training=True)
            with tf.GradientTape() as tape:
                loss = loss_fn(y, predictions)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        print("epoch", epoch, "loss", float(loss))


if __name__ == "__main__":
    model, dataset = make_model(), make_dataset()
    train(model, dataset)
