import numpy as np
import tensorflow as tf
from tensorflow import keras

x = np.load("signs_x.npy") / 255.0
y = np.load("signs_y.npy")
x = x.reshape(-1, 64, 64, 1)

model = keras.Sequential([
    keras.layers.Conv2D(16, 3, activation="relu", input_shape=(64, 64, 1)),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(32, 3, activation="relu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Flatten(),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, epochs=10, batch_size=32, validation_split=0.2)
