import numpy as np
import pandas as pd
import tensorflow as tf

df = pd.read_csv("transactions.csv")
X = df.drop(columns=["is_fraud"]).values.astype("float32")
y = df["is_fraud"].values

# the file is sorted by label, so shuffle before the split
np.random.shuffle(X)
np.random.shuffle(y)

split = int(0.8 * len(X))
X_train, X_test = X[:split], X[split:]
y_train, y_test = y[:split], y[split:]

model = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation="relu", input_shape=(X.shape[1],)),
    tf.keras.layers.Dense(16, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
model.fit(X_train, y_train, epochs=30, batch_size=32, validation_data=(X_test, y_test), verbose=2)
print(model.evaluate(X_test, y_test, verbose=0))
