"""Wall-clock totals of wrapped functions (on the calling thread), for the device scripts."""
import functools
import time

#: seconds per label, summed over calls; clear it between measurements
T: dict = {}


def wrap(obj, name, label):
    """Replace ``obj.name`` by a wrapper that adds each call's wall time to ``T[label]``."""
    f = getattr(obj, name)

    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            T[label] = T.get(label, 0.0) + time.perf_counter() - t
    setattr(obj, name, g)
