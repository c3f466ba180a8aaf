import tensorflow as tf


def export(model, path):
    tf.saved_model.save(model, path)
