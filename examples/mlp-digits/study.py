"""The mlp-digits example in one process: this program loads the digits once and trains each
configuration moldtune proposes (space.yaml), reporting every epoch's held-out accuracy so
that hopeless configurations are pruned. The same training as mlp.mold.py, without a Python
start and a scikit-learn import per configuration.

  pip install './python[example]'        # the moldtune package and binary, scikit-learn
  python examples/mlp-digits/study.py [--dir results/mlp-study] [--seed 0] [--trials 30]
"""
import argparse
import time
import warnings
from pathlib import Path

import moldtune
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

warnings.filterwarnings("ignore", category=ConvergenceWarning)
SPACE = Path(__file__).with_name("space.yaml")
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.3, random_state=0, stratify=y)


def objective(trial):
    p = trial.params  # BATCH and LR are absent for lbfgs
    model = MLPClassifier(hidden_layer_sizes=(64,), solver=p["SOLVER"], batch_size=p.get("BATCH", 200),
                          max_iter=p["EPOCHS"], alpha=p["ALPHA"], learning_rate_init=p.get("LR", 0.001),
                          random_state=0)
    t0 = time.perf_counter()
    if p["SOLVER"] == "lbfgs":  # no epochs: never pruned
        model.fit(X_train, y_train)
    else:
        for epoch in range(1, p["EPOCHS"] + 1):
            model.partial_fit(X_train, y_train, classes=range(10))
            if trial.report(epoch, model.score(X_test, y_test)):
                raise moldtune.TrialPruned()
    trial.record["train_s"] = time.perf_counter() - t0
    return model.score(X_test, y_test)


def tune(dir, seed=None, trials=None):
    with moldtune.Study(SPACE, dir=dir, seed=seed, max_evals=trials) as study:
        return study.optimize(objective)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="results/mlp-study", help="the run directory (continued if it exists)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--trials", type=int, help="the budget (default: space.yaml's max_evals)")
    a = ap.parse_args()
    best = tune(a.dir, a.seed, a.trials)
    print(f"best: accuracy {best['value']:.4f} (eval {best['eval']}) with {best['config']}" if best else "no result")
