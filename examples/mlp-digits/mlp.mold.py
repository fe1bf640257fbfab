"""moldtune example: an MLP trained on scikit-learn's digits (shipped with it: nothing is
downloaded). The markers BATCH, EPOCHS, ALPHA, SOLVER and LR (each written with a leading
hash sign) are replaced by a configuration's values; BATCH and LR are inactive (empty) for
lbfgs, which uses neither. The training seed is fixed (MLP_SEED, default 0) so that a
configuration's accuracy is a property of the configuration; results/mlp-digits/README.md
says how much it moves across seeds. The 30% held out is the one accuracy reported, after
each epoch and at the end.
"""
import os
import time
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

warnings.filterwarnings("ignore", category=ConvergenceWarning)

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X / 16.0, y, test_size=0.3, random_state=0, stratify=y
)
model = MLPClassifier(
    hidden_layer_sizes=(64,),
    solver="#SOLVER",
    batch_size=int("#BATCH" or 200),
    max_iter=#EPOCHS,
    alpha=#ALPHA,
    learning_rate_init=float("#LR" or 0.001),
    random_state=int(os.environ.get("MLP_SEED", "0")),
)
# adam and sgd are trained one epoch at a time, each epoch's held-out accuracy printed (and
# flushed) as it comes: `progress:` in mlp.yaml reads it to prune hopeless configurations.
# L-BFGS has no epochs (its iterations cannot be resumed one by one): it reports nothing
# on the way, and is never pruned.
train_s = 0.0
if model.solver == "lbfgs":
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    train_s = time.perf_counter() - t0
else:
    classes = sorted(set(y_train))
    for epoch in range(1, model.max_iter + 1):
        t0 = time.perf_counter()
        model.partial_fit(X_train, y_train, classes=classes)
        train_s += time.perf_counter() - t0
        print(f"epoch {epoch} val_acc {model.score(X_test, y_test):.4f}", flush=True)
print(f"accuracy: {model.score(X_test, y_test):.4f}")
print(f"train_s: {train_s:.4f}")
