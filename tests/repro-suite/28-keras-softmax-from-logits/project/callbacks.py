import tensorflow as tf


def default_callbacks(patience=3):
    return [tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=patience, restore_best_weights=True)]
