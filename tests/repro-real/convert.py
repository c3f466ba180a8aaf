"""Rebuilds the case folders of tests/repro-real from a git clone of
mehilshah/Bug_Reproducibility_DL_Bugs (reads it with `git show`, needs no work tree):

    python3 tests/repro-real/convert.py /path/to/Bug_Reproducibility_DL_Bugs tests/repro-real

The truth of each case (symptom, exception type, notes) is written by hand below; everything
else is taken from the dataset. The README.md of the suite is written by hand.
"""
import csv, io, subprocess, sys, re, json, html, os, shutil

# One entry per case: dataset folder, slug, truth and how to build the report.
# symptom/error_type/notes are the ground truth; 'observed' lists lines of output.txt for silent bugs
# (crashes take the exception lines automatically); 'expected' the line(s) a reproduction must show.
C = []
def case(n, slug, symptom, requires, file=None, loop=False, error=None, expected=None, observed=None,
         title=None, text=None, notes="", code=None, text_cut=None):
    C.append(dict(n=n, slug=slug, symptom=symptom, requires=requires, file=file, loop=loop, error=error,
                  expected=expected, observed=observed, title=title, text=text, notes=notes, code=code, text_cut=text_cut))

# ---- PyTorch
case("100", "torch-unpacked-view-inplace", "crash", ["torch"], error="RuntimeError",
     expected=["RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled."],
     notes="Unpacking a tensor (a1, a2 = t) yields views from unbind(); an in-place += of a grad-requiring value on such a view is refused.")
case("037", "torch-tensor-of-tensors", "crash", ["torch"], error="ValueError",
     expected=["ValueError: only one element tensors can be converted to Python scalars"],
     notes="torch.tensor() on a list of multi-element tensors; torch.stack is needed. The snippet also says `pytorch` for `torch` and pastes printed tensors as code.")
case("050", "torch-densenet-forward-args", "crash", ["torch"], file="generator.py", error="TypeError",
     expected=["TypeError: DenseBlock.forward() takes 2 positional arguments but 4 were given"],
     notes="The loop in MGenDenseNet rebinds `block` to the DenseBlock it just built, so the next DenseBlock's _make_layer calls that module instance with three arguments, i.e. its forward().")
case("101", "torch-resunet-cat-sizes", "crash", ["torch"], file="resunet.py", error="RuntimeError",
     expected=["RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 5 but got size 4 for tensor number 1 in the list."],
     notes="Input 320x320 is not divisible by 2**6: after six stride-2 encoders and the decoders the skip connection has 5 rows and the upsampled map 4; torch.cat fails.")
case("046", "torch-linear-19x1", "crash", ["torch", "numpy"], file="regression.py", error="RuntimeError",
     expected=["RuntimeError: mat1 and mat2 shapes cannot be multiplied (19x1 and 19x1)"],
     notes="nn.Linear(19, 1) built for the number of samples instead of the number of features (1).")
case("054", "torch-mean-long", "crash", ["torch"], error="RuntimeError",
     expected=["RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"],
     notes="torch.tensor([1,0,1]) is int64; mean() needs a floating dtype.")
case("055", "torch-vrnn-cat-dim", "crash", ["torch"], file="vrnn.py", error="IndexError",
     expected=["IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)"],
     notes="In generate(), multinomial(1).squeeze() leaves a 0-D index, so the embedding phi_x(x) is 1-D (64,) and torch.cat([x, z], dim=1) has no dimension 1.")
case("041", "torch-dot-2d", "crash", ["torch"], file="logistic.py", error="RuntimeError",
     expected=["RuntimeError: 1D tensors expected, but got 2D and 2D tensors"],
     notes="torch.dot only takes 1-D tensors; the gradient needs a matrix product (@ / torch.mm).")
case("080", "torch-init-typo-empty-params", "crash", ["torch"], file="model.py", error="ValueError",
     expected=["ValueError: optimizer got an empty parameter list"],
     notes="`___init___` (three underscores) is never called as the constructor, so no layer is registered and parameters() is empty. The dataset files this as TF + Keras; the code is PyTorch.")
case("084", "torch-unfold-shapes", "wrong_shape", ["torch"],
     observed=["torch.Size([4, 64, 174, 106, 15])", "torch.Size([4, 576, 13432])"],
     expected=["torch.Size([4, 64, 174, 106, 15])", "torch.Size([4, 576, 13432])"],
     text_cut="EDIT",
     code="""import torch
from torch import nn

kernel_size = 7
stride = 1

# approach 1
data = torch.rand(4, 64, 174, 120)
data1 = data.unfold(3, kernel_size * 2 + 1, stride)
print(data1.shape)

# approach 2
data = torch.rand(4, 64, 174, 120)
unfold = nn.Unfold(3, kernel_size * 2 + 1, stride)
data2 = unfold(data)
print(data2.shape)""",
     notes="nn.Unfold's positional arguments are (kernel_size, dilation, padding, stride), not Tensor.unfold's (dimension, size, step): it extracts 3x3 patches over both spatial axes. The dataset has no original_code_snippet.py; the code is the post's own (kept on one line by the dataset, re-lined here, identical to the dataset's reproduction).")
case("063", "torch-concurrent-softmax", "wrong_calculation", ["torch"], file="concurrent_softmax.py",
     observed=["tensor(0.5000)", "tensor(0.6682)", "tensor(0.6225)"],
     expected=["tensor(0.5000)", "tensor(0.6682)", "tensor(0.6225)"],
     notes="With the (1 - y_j) weights the denominator sums exp(x_j) only over the classes labelled 0, so the output for the negative class is 0.5 whatever the logits and the positives do not compete with each other, which the reporter takes for a wrong result.")
case("042", "torch-nn-not-training", "performance_degradation", ["torch", "numpy"], file="train.py", loop=True,
     observed=["Epoch: 1800/2000..  Training Loss: 0.025..  Test Loss: 0.100.. ", "Epoch: 1900/2000..  Training Loss: 0.025..  Test Loss: 0.100.. "],
     expected=["Training Loss: 0.025..  Test Loss: 0.100.."],
     notes="log_softmax over a single output unit is always 0 (probability 1), so BCELoss sees a constant prediction, the gradients vanish and the losses never move.")
case("060", "torch-lstm-loss-stuck", "performance_degradation", ["torch"], file="train.py", loop=True,
     observed=["epoch: 10\tTrain Loss : 1.0986123085021973"],
     expected=["Train Loss : 1.0986123085021973"],
     notes="Softmax applied before nn.CrossEntropyLoss (which applies log-softmax) with lr=1e-2 and dropout 0.8: the loss sticks at ln(3)=1.0986, i.e. uniform predictions over 3 classes. Uses tqdm and CUDA in the snippet; the reproduction needs neither.")
# ---- TensorFlow / Keras
case("094", "keras-sparse-ce-onehot-shapes", "crash", ["tensorflow"], file="train.py", loop=True, error="ValueError",
     expected=["ValueError: Dimensions must be equal, but are 2 and 32 for '{{node Equal}}"],
     notes="No Flatten before the Dense layers, so the output is (None, 32, 32, 2); with one-hot labels (N, 2) and SparseCategoricalCrossentropy the accuracy metric compares [?,2] with [?,32,32].")
case("096", "keras-vgg19-cifar-input-shape", "crash", ["tensorflow"], file="vgg19.py", loop=True, error="ValueError",
     expected=['ValueError: Input 0 of layer "sequential" is incompatible with the layer: expected shape=(None, 224, 224, 3), found shape=(None, 32, 32, 3)'],
     notes="The VGG19 is built for 224x224 inputs and fed CIFAR-10's 32x32 images. Also downloads CIFAR-10 (no network in the sandbox).")
case("025", "tf2-session-removed", "crash", ["tensorflow"], error="AttributeError",
     expected=["AttributeError: module 'tensorflow' has no attribute 'Session'"],
     code="import tensorflow as tf\nsess = tf.Session()",
     notes="tf.Session was removed in TensorFlow 2 (tf.compat.v1.Session). The dataset has no original_code_snippet.py; the code is the two commands the post lists.")
case("048", "keras-multiply-scalar", "crash", ["tensorflow"], file="model.py", error="ValueError",
     expected=['ValueError: Exception encountered when calling layer "multiply" (type Multiply).'],
     notes="keras.layers.Multiply multiplies layer outputs of the same shape; a 0-D constant tensor is not one (the post saw 'tuple index out of range' on an older Keras; TF 2.15 says 'dim 1 not in the interval').")
case("014", "keras-conv-negative-dims", "crash", ["tensorflow", "numpy"], file="dcnn.py", loop=True, error="ValueError",
     expected=["ValueError: One of the dimensions in the output is <= 0 due to downsampling in conv2d."],
     notes="input_shape=(1, 20, 56) is channels-first data under the channels-last default: the 1-pixel-high image shrinks below zero in the first 3x3 convolution. Also uses Keras 1's border_mode argument.")
case("069", "tf-mha-attention-axes-mask", "crash", ["tensorflow", "numpy"], file="encoder.py", error="InvalidArgumentError",
     expected=["Incompatible shapes: [4,5,2,20,20] vs. [4,5,1,5,20]"],
     notes="Embedding(mask_zero=True) propagates a mask that MultiHeadAttention with attention_axes=2 broadcasts along the wrong axis.")
case("011", "keras-conv-negative-dimension", "crash", ["tensorflow"], file="model.py", error="ValueError",
     expected=["Negative dimension size caused by subtracting 3 from 2"],
     notes="Four conv+pool stages shrink a 32x32 input to 2x2 before the last 3x3 convolution.")
case("021", "keras-conv-no-flatten-sparse-ce", "crash", ["tensorflow", "numpy"], file="train.py", loop=True, error="InvalidArgumentError",
     expected=["logits and labels must have the same first dimension, got logits shape [25088,10] and labels shape [32]"],
     notes="Dense layers after a Conv2D without Flatten: the output stays (None, 28, 28, 10), so sparse categorical cross-entropy sees 32*28*28 logits for 32 labels.")
case("061", "tf-concat-ranks", "crash", ["tensorflow"], file="concat.py", error="InvalidArgumentError",
     expected=["ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. shape[1] = [5]"],
     notes="tf.concat needs tensors of the same rank; a ragged tensor or padding is needed.")
case("093", "tf-broadcast-mul", "crash", ["tensorflow"], file="broadcast.py", error="InvalidArgumentError",
     expected=["Incompatible shapes: [1,5,64] vs. [1,5] [Op:Mul]"],
     notes="Broadcasting aligns trailing axes: (1,5,64) and (1,5) do not broadcast; y needs shape (1,5,1).")
case("016", "keras-conv2d-3d-input", "crash", ["tensorflow", "numpy"], file="cnn.py", loop=True, error="ValueError",
     expected=['ValueError: Input 0 of layer "conv2d" is incompatible with the layer: expected min_ndim=4, found ndim=3. Full shape received: (300, 5, 720)'],
     notes="The samples (300, 5, 720) and in_shape (5, 720) have no channel axis; Conv2D needs (5, 720, 1) and data of shape (300, 5, 720, 1).")
case("020", "keras-channels-first-mnist", "crash", ["tensorflow", "numpy"], file="mnist_cnn.py", loop=True, error="ValueError",
     expected=["Negative dimension size caused by subtracting 3 from 1"],
     notes="MNIST reshaped to (1, 28, 28) (Theano ordering) under TensorFlow's channels-last default: the image is 1 pixel high. Also downloads MNIST.")
case("082", "tf-complex-mul-shapes", "crash", ["tensorflow", "numpy"], file="green.py", error="InvalidArgumentError",
     expected=["Incompatible shapes: [64,40000] vs. [64] [Op:Mul]"],
     notes="tf.multiply of a (64, 40000) matrix with a (64,) vector broadcasts over the last axis, not the first; the vector needs shape (64, 1). The snippet reads green.mat with scipy.io, which the reproduction replaces with random data.")
case("090", "tf-map-fn-ragged", "crash", ["tensorflow"], file="outer.py", error="InvalidArgumentError",
     expected=["All flat_values must have compatible shapes."],
     notes="tf.map_fn over a ragged tensor with a function whose outputs are ragged of a different shape needs fn_output_signature=tf.RaggedTensorSpec(...).")
case("068", "keras-seq2seq-attention-concat", "crash", ["tensorflow", "numpy"], file="s2s.py", loop=True, error="ValueError",
     expected=["Dimension 1 in both shapes must be equal, but are 12 and 32."],
     notes="The attention layer is called with the encoder and decoder sequences swapped, so its output has the encoder's length and cannot be concatenated with the decoder outputs.")
case("018", "keras-custom-loss-closure-shape", "crash", ["tensorflow", "numpy"], file="train.py", loop=True, error="InvalidArgumentError",
     expected=["Incompatible shapes: [32,5] vs. [100,5]"],
     notes="The custom loss multiplies by a weights array of the whole training set's shape (100, 5) while Keras feeds batches of 32.")
case("022", "tf-tape-outside-forward", "crash", ["tensorflow", "numpy"], file="train.py", loop=True, error="ValueError",
     expected=["ValueError: No gradients provided for any variable"],
     notes="The forward pass (model(data)) runs outside the GradientTape, so every gradient is None. The snippet is TF 1 eager (tf.contrib), migrated to TF 2 by the dataset's author.")
case("019", "keras-extra-batch-axis", "crash", ["tensorflow", "numpy"], file="load_images.py", error="ValueError",
     expected=['expected shape=(None, 286, 384, 1), found shape=(None, None, 286, 384, 1)'],
     notes="input_shape includes the batch axis ((None, 286, 384, 1)), to which Keras adds its own, so the model expects 5-D input; the grayscale images also lack the channel axis. The snippet leaves input_shape and files undefined; the dataset's author filled them in.")
case("003", "keras-mnist-labels-scaled", "performance_degradation", ["tensorflow", "numpy"], file="mnist_cnn.py", loop=True,
     observed=["test accuracy: 0.09799999743700027"],
     expected=["test accuracy: 0.09"],
     notes="y_train is divided by 255 along with x_train, so the sparse labels are all 0 (or fractions) and the model learns nothing (accuracy ~ chance, huge test loss). Also downloads MNIST.")
case("035", "keras-matrix-inverse-rmse", "performance_degradation", ["tensorflow", "numpy"], file="inverse.py", loop=True,
     observed=["Validation RMSE: 456.5867421695466"],
     expected=["Validation RMSE: 4"],
     notes="Unscaled inputs with entries in (0, 100) and a 9-neuron network: the validation RMSE of the inverse stays in the hundreds.")
case("034", "keras-relu-output-regression", "wrong_calculation", ["tensorflow", "numpy"], file="model.py", loop=True,
     observed=[" [0.49911702]", " [0.49757805]", " [0.49767327]", " [0.4885921 ]", " [0.4889281 ]]"],
     expected=["[0.4885921 ]"],
     notes="A ReLU output layer for a regression target with negative values: no prediction can be negative (the dataset's run shows predictions collapsed near one value, none negative).")
case("017", "keras-xor-softmax-single-unit", "performance_degradation", ["tensorflow", "numpy"], file="xor.py", loop=True,
     observed=["0.6666666865348816", "", "[[1.]]", "", "[[1.]]"],
     expected=["[[1.]]"],
     notes="softmax over a single output unit always gives 1.0, so the XOR network predicts 1 for every input.")
case("010", "keras-val-split-unshuffled", "performance_degradation", ["tensorflow", "numpy"], file="train.py", loop=True,
     observed=["480/480 [==============================] - 20s 43ms/step - loss: 0.0210 - accuracy: 0.9929 - val_loss: 43.2529 - val_accuracy: 0.0000e+00"],
     expected=["val_accuracy: 0.0000e+00"],
     notes="validation_split takes the last 20% of the arrays without shuffling; with the samples ordered by class, validation holds a class the model never saw: training accuracy 0.99, validation accuracy 0. The dataset's author also widened the softmax from 4 to 5 units to match the 5 classes.")
case("079", "tf-second-matmul-slow", "low_efficiency", ["tensorflow", "numpy"], file="timing.py",
     observed=["constant init time:  6.12801481291032", "constant init plus third multiplication time:  5.921319539547913"],
     expected=["constant init plus third multiplication time:"],
     notes="Converting large numpy arrays to tensors inside the timed region dominates; the later runs are fast. Needs several GB of memory at the original sizes (9000x4000 float64).")
# ---- added 2026-12-03 (afternoon), held out: the dataset's one remaining Keras post of 001-102 that needs
# only numpy and TensorFlow/Keras and whose output shows its symptom; written in Keras 1 (Convolution1D,
# nb_filter, filter_length, border_mode, nb_epoch).
case("015", "keras1-conv1d-softmax-single-unit", "performance_degradation", ["tensorflow", "numpy"], file="classifier.py", loop=True,
     observed=["[[1.]", " [1.]", " [1.]", " [1.]]"],
     expected=["[1.]"],
     notes="softmax over the single output unit of a binary classifier always gives 1.0, so every prediction is 1 whatever the input (sigmoid is needed). The snippet leaves its imports and X_train/y_train/X_test/y_test undefined and uses Keras 1 argument names. The output shown is the first three and the last of the 100 predictions the dataset's run printed.")

# ---- added 2026-12-03 (late afternoon), held out: the posts of 001-102 that also need pandas, scikit-learn or torchvision
# (now in `cargo xtask setup --with dl`) and whose output shows the reported symptom from the post's own
# code. Written before any agent or rule saw them; 002 (KerasClassifier cross-validation, ten folds of 200
# epochs), 027 and 032 (two-line snippets whose output alone does not show what is wrong), 030 (the bug
# is in an unshared sorted CSV), 065 (no symptom in the output), 066 and 067 (the output comes from code
# the author rewrote) stay out.
case("001", "keras-mnist-csv-unscaled-nan", "wrong_calculation", ["tensorflow", "numpy", "pandas"], file="mnist_mlp.py", loop=True,
     observed=["1563/1563 [==============================] - 12s 6ms/step - loss: nan - accuracy: 0.0985",
               "1563/1563 [==============================] - 9s 6ms/step - loss: nan - accuracy: 0.0986"],
     expected=["loss: nan"],
     notes="The MNIST pixels are fed unscaled (0-255) to plain SGD through a linear 784-unit layer, so the first updates overflow and the loss is NaN from the first epoch (accuracy stays at chance, 0.0986). The snippet reads MNIST CSVs from a Colab folder (not shared) and uses TF1's tf.train.GradientDescentOptimizer; the dataset's author used the Kaggle MNIST CSVs and tf.keras.optimizers.SGD(learning_rate=0.1).")
case("004", "keras-confusion-matrix-onehot", "crash", ["tensorflow", "numpy", "sklearn"], error="ValueError",
     expected=["ValueError: multilabel-indicator is not supported"],
     notes="sklearn's confusion_matrix is given one-hot targets and thresholded one-hot predictions (a multilabel indicator matrix); it takes class labels (argmax of each). The post's code blocks are cut from the dataset's prose; the snippet is only the compile and fit lines, and the dataset's author wrote the confusion-matrix call from the prose (Iris data, one-hot labels).")
case("006", "keras-validation-data-list", "wrong_calculation", ["tensorflow", "numpy", "pandas", "sklearn"], file="binary_classifier.py", loop=True,
     observed=["1/1 [==============================] - 1s 867ms/step - loss: 0.5484 - accuracy: 1.0000 - val_loss: 0.0000e+00 - val_accuracy: 0.0000e+00",
               "1/1 [==============================] - 0s 32ms/step - loss: 0.5293 - accuracy: 1.0000 - val_loss: 0.0000e+00 - val_accuracy: 0.0000e+00"],
     expected=["val_loss: 0.0000e+00 - val_accuracy: 0.0000e+00"],
     notes="validation_data is given as a list [X_val, y_val]; Keras 2.15 unpacks only a tuple as (x, y), so the list is read as inputs without targets and the validation loss and accuracy are 0 every epoch while model.evaluate on the same data is not. The snippet reads an unshared CSV of 19 features and a 0/1 label; the dataset's author used one random sample.")
case("007", "keras-predict-one-row", "crash", ["tensorflow", "numpy", "pandas", "sklearn"], file="text_classifier.py", loop=True, error="ValueError",
     expected=['Input 0 of layer "dense" is incompatible with the layer: expected min_ndim=2, found ndim=1. Full shape received: (1,)'],
     notes="model.predict(x_data[0]) passes one row without its batch axis (shape (100,)), which predict() splits into 100 one-element batches; x_data[0:1] (or a reshape to (1, 100)) is needed. The snippet reads an unshared CSV of queries and tags; the dataset's author wrote one.")
case("023", "keras-two-softmax-units-slow", "performance_degradation", ["tensorflow", "numpy", "pandas", "sklearn"], file="toy_classifier.py", loop=True,
     observed=["1/1 [==============================] - 0s 0s/step - loss: 0.6893 - accuracy: 0.5000", "Accuracy score: 0.5"],
     expected=["accuracy: 0.5000"],
     notes="A 2-unit sigmoid hidden layer and a 2-unit softmax trained 5 epochs with Adam's default step on inputs in [0.2, 0.7] barely moves from the initial weights: every prediction is one class and accuracy stays at 0.5 (more epochs or a larger learning rate fix it, as the post's edits find). The snippet also calls predict_classes (removed in Keras 2.6) and accuracy_score before importing it; the dataset's author used a six-row dataset.")
case("026", "keras-sigmoid-output-regression", "performance_degradation", ["tensorflow", "numpy", "pandas", "sklearn"], file="linear_regression.py", loop=True,
     observed=["[[0.9995588 ]", " [0.99956876]", " [0.9995746 ]"],
     expected=["[0.9995"],
     notes="A regression of targets far above 1 (the dataset's author: y = x^2 + 3) with a sigmoid output unit: the output saturates and every prediction is about 0.9996 (a linear output unit is needed; 'accuracy' means nothing here either). The snippet reads an unshared CSV; only the first three of the 51 predictions the dataset's run printed are shown.")
case("029", "keras-regression-sgd-not-learning", "performance_degradation", ["tensorflow", "numpy"], file="regression.py", loop=True,
     observed=["2/2 [==============================] - 1s 0s/step - loss: 495184.4062 - accuracy: 0.0000e+00",
               "2/2 [==============================] - 0s 0s/step - loss: 1354.9259 - accuracy: 0.0000e+00"],
     expected=["accuracy: 0.0000e+00"],
     notes="SGD with learning rate 0.1 on unscaled targets up to about 125 (y = 5x^2 + noise) never fits: the loss stays above 1000 after 1000 epochs, and the 'accuracy' metric is 0 for a regression. The output shown is the first and the last epoch of the dataset's run. The snippet leaves its imports out and uses Keras 1 names (init=, output_dim=, nb_epoch=, lr=) and matplotlib.")
case("033", "keras-multilabel-softmax-mse", "performance_degradation", ["tensorflow", "numpy", "sklearn"], file="multilabel.py", loop=True,
     observed=["107/107 [==============================] - 1s 5ms/step - loss: 0.2574 - accuracy: 0.6778 - val_loss: 0.2415 - val_accuracy: 0.6475", "0.95875"],
     expected=["val_accuracy: 0.6475"],
     notes="Multi-label targets (make_multilabel_classification) with a softmax output, mean squared error and plain SGD: the network reaches about 0.65 validation accuracy where an SVM on the same data scores 0.96 (sigmoid outputs with binary cross-entropy are needed). The snippet leaves train_test_split unimported and uses nb_epoch; the dataset's author scored the SVM on argmax labels.")
case("039", "torch-running-loss-not-reset", "wrong_calculation", ["torch", "torchvision"], file="train.py", loop=True,
     observed=["Train Loss: 1.324 | Train Accuracy: 60.200", "Train Loss: 2.744 | Train Accuracy: 73.800",
               "Train Loss: 4.028 | Train Accuracy: 79.533", "Train Loss: 10.627 | Train Accuracy: 92.100"],
     expected=["Train Loss: 2.744"],
     notes="running_loss, correct and total are set once before the epoch loop, so the printed training loss adds up every epoch's losses (it grows from 1.3 to 10.6 while accuracy rises); they must be reset at the start of each epoch. The snippet is the training function only (tqdm notebook progress bar, CUDA device); the dataset's author trained a small network on MNIST from torchvision.")
case("086", "torch-loss-name-rebound", "crash", ["torch", "torchvision"], file="train.py", loop=True, error="TypeError",
     expected=["TypeError: 'Tensor' object is not callable"],
     notes="`loss = loss(preds, ys)` rebinds the name of the CrossEntropyLoss module to the first batch's loss tensor, so the second batch calls a tensor. The snippet is the training loop only; the dataset's author added an MLP, Adam and MNIST from torchvision.")
case("088", "torch-resnet-concat-features", "crash", ["torch", "torchvision"], file="mixed_network.py", error="RuntimeError",
     expected=["RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x3048 and 1000x512)"],
     notes="The ResNet-50 trunk without its classifier gives 2048 features and the landmark branch 1000; their concatenation has 3048 columns but the combined head's first Linear takes 1000. The snippet is the model class only; the dataset's author called it on one 224x224 image and 96 landmark features.")

# ---- added 2026-12-03 (evening), held out: when 46 moved to development (the restructuring's crash guard was
# written from its transcript), the one post of 001-102 marked reproducible, needing only frameworks the
# `--with dl` environment has, whose output shows its symptom, and not yet converted or ruled out.
case("064", "keras-sequential-layers-not-list", "crash", ["tensorflow", "numpy", "pandas", "sklearn"], file="house_prices.py", error="TypeError",
     expected=["TypeError: unsupported operand type(s) for +=: 'Dense' and 'str'"],
     notes="Sequential(Dense(...), Dense(...)) passes the second layer as Sequential's `name` argument (its signature is Sequential(layers=None, name=None)); building the model's name scope then adds a string to a Dense layer. The layers must be given as a list. The snippet starts from an unshared DataFrame `df` of a price column and seven features; the dataset's author built one of random integers.")

csv.field_size_limit(10**9)
R = sys.argv[1]
COMMIT = subprocess.run(['git', '-C', R, 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
OUT = sys.argv[2]
def show(p):
    r = subprocess.run(['git', '-C', R, 'show', 'HEAD:' + p], capture_output=True, text=True, errors='replace')
    return r.stdout if r.returncode == 0 else None
titles = {}
for f in ['Keras_Posts.csv', 'PyTorch_Posts.csv', 'Tensorflow_Posts.csv', 'DL_Bugs.csv', 'DL_Bugs_Complete.csv']:
    for row in csv.DictReader(io.StringIO(show('Dataset/' + f))):
        titles.setdefault(row['QuestionLink'].rstrip('/').split('/')[-1], row['Title'])
man = list(csv.DictReader(io.StringIO(show('Dataset/Dataset_Manual_Reproduction.csv'))))
llama = {r['Bug ID']: r for r in csv.DictReader(io.StringIO(show('Llama3-Experiments/Cleaned_LLaMA_Bugs.csv')))}
study = {'094': 'Bug-4E-1-Tensor.txt', '101': 'Bug-3E-2-API.txt', '003': 'Bug-2E-1-Training.txt'}
LOOP = re.compile(r'\.fit\(|\.fit_generator\(|\.backward\(|apply_gradients|optimizer\w*\.step\(')

def crash_lines(out):
    lines = out.replace('\ufffd', '\u2022').splitlines()
    start = max(i for i, l in enumerate(lines) if l.startswith('Traceback (most recent call last)'))
    keep, skip_next = ['Traceback (most recent call last):'], False
    body = lines[start + 1:]
    for i, l in enumerate(body):
        if skip_next:
            skip_next = False
            if l.strip() and not re.match(r'^\s*File "', l):
                continue
        if re.match(r'^\s*File "', l):
            skip_next = True
            if keep[-1] != '  ...':
                keep.append('  ...')
            continue
        keep.append(l.rstrip())
    text = '\n'.join(keep)
    text = re.sub(r'\n{3,}', '\n\n', text).strip('\n')
    return shorten(text)

def shorten(text, head=20, tail=6):
    # A dumped tensor can fill hundreds of lines; a report quotes its start and its end.
    lines = text.splitlines()
    if len(lines) > head + tail + 1:
        lines = lines[:head] + [f'[... {len(lines) - head - tail} lines ...]'] + lines[-tail:]
    return '\n'.join(lines)

rows = []
for c in C:
    n = c['n']; m = man[int(n) - 1]; sid = m['Bug ID']
    url = f'https://stackoverflow.com/questions/{sid}'
    snippet = show(f'Bugs/{n}/original_code_snippet.py')
    code = c['code'] or snippet
    assert code, n
    out = show(f'Bugs/{n}/output.txt') or ''
    title = titles.get(sid)
    prose, prose_src = None, None
    if n in study:
        prose = show('User-Study-RQ3/Hint-Formulation/Bug-Reports/' + study[n]).strip(); prose_src = 'User-Study-RQ3/Hint-Formulation/Bug-Reports/' + study[n]
    elif sid in llama:
        prose = html.unescape(llama[sid]['Text']).strip(); prose_src = 'Llama3-Experiments/Cleaned_LLaMA_Bugs.csv (Text)'
    if prose and c['text_cut']:
        prose = prose.split(c['text_cut'])[0].strip()
    if c['symptom'] == 'crash':
        observed = crash_lines(out)
    else:
        observed = '\n'.join(c['observed'])
        assert all(l in out for l in c['observed'] if l.strip()), (n, 'observed not in output')
    for e in c['expected']:
        assert e in out, (n, e)
    if c['error'] and c['symptom'] == 'crash':
        assert c['error'] in observed.splitlines()[-1] or c['error'] in observed, n
    file = c['file']
    if file:
        has_loop = bool(LOOP.search(code))
        if has_loop != c['loop']:
            print('LOOP MISMATCH', n, has_loop, c['loop'])
    neutral_title = title is None
    if neutral_title:
        if c['symptom'] == 'crash':
            last = [l.strip() for l in observed.splitlines() if re.match(r'^\s*(\w+\.)*\w*(Error|Exception)\b', l.strip())]
            title = last[-1][:120] if last else c['error']
        else:
            title = None
    reqs = show(f'Bugs/{n}/requirements.txt') or ''
    env = ', '.join(l.strip() for l in reqs.splitlines() if l.strip())
    # report.md
    parts = []
    if title:
        parts.append(f'# {title}'); parts.append('')
    if prose:
        parts.append(prose); parts.append('')
    elif c['symptom'] != 'crash':
        parts.append('This code gives the output below.'); parts.append('')
    parts.append('```python'); parts.append(code.rstrip('\n')); parts.append('```'); parts.append('')
    parts.append('Output:'); parts.append(''); parts.append('```'); parts.append(observed); parts.append('```'); parts.append('')
    if env:
        parts.append(f'Versions: {env}'); parts.append('')
    report = '\n'.join(parts)
    idx = len(rows) + 1
    folder = f'{idx:02d}-{c["slug"]}'
    d = os.path.join(OUT, folder)
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(d)
    open(os.path.join(d, 'report.md'), 'w').write(report)
    if file:
        os.makedirs(os.path.join(d, 'project'))
        open(os.path.join(d, 'project', file), 'w').write(code if code.endswith('\n') else code + '\n')
    provenance = []
    if prose_src: provenance.append(f'prose: the post\'s own text from {prose_src}')
    else: provenance.append('no prose in the dataset: the report is the original snippet and the observed output only')
    if neutral_title: provenance.append('title: none in the dataset, the report\'s first line is ' + ('the exception line' if title else 'left untitled'))
    notes = c['notes'] + ' Report: ' + '; '.join(provenance) + '; output from the dataset\'s output.txt.'
    truth = {'symptom': c['symptom']}
    if c['error']: truth['error_type'] = c['error']
    if file: truth['buggy_file'] = file
    truth['training_loop_files'] = [file] if (file and c['loop']) else []
    truth['requires'] = c['requires']
    truth['notes'] = notes
    open(os.path.join(d, 'case.json'), 'w').write(json.dumps(truth, indent=2) + '\n')
    fw = 'PyTorch' if 'torch' in c['requires'] else 'TensorFlow/Keras'
    src = {'dataset': 'mehilshah/Bug_Reproducibility_DL_Bugs', 'dataset_commit': COMMIT, 'path': f'Bugs/{n}',
           'post_id': sid, 'url': url, 'framework': fw, 'dataset_framework': m['Framework'],
           'dataset_bug_type': m['Type of Bug'], 'dataset_reproducible': m['Reproducible?'],
           'report_title': 'post title' if not neutral_title else ('exception line' if title else 'none'),
           'report_prose': prose_src or 'none',
           'expected_output': c['expected']}
    open(os.path.join(d, 'truth.json'), 'w').write(json.dumps(src, indent=2, ensure_ascii=False) + '\n')
    rows.append((folder, n, sid, url, fw, c['symptom'] + (f' ({c["error"]})' if c['error'] else ''), c['requires'], bool(prose_src)))
print(len(rows), 'cases')
