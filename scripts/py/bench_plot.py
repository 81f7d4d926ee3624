"""PNG plots of the benchmark: per-batch time against table size, per workload.

Reads the orchestrator's results.json. The parts used (other keys are ignored):

    {"workloads": [ {"name": "2b-uniform-10k",
                     "systems": [ {"system": "deltars",
                                   "batches": [{"index": 1, "seconds": 0.5,
                                                "table_rows_before": 200000}, ...]},
                                  ...]},
                    ...]}

"workloads" and "systems" may also be objects keyed by name. A batch
without table_rows_before is plotted at its index (and the x axis says so).
"""

import os
import re

MARKERS = "os^vD<>ph*"


def items(collection, name_key):
    """(name, value) pairs of a list of named objects or of an object keyed by name."""
    if isinstance(collection, dict):
        return [(k, v) for k, v in collection.items()]
    out = []
    for v in collection or []:
        out.append((v.get(name_key) or v.get("name") or f"#{len(out) + 1}", v))
    return out


def series(system):
    """(x values, y values in ms, whether x is the table size) of one system's batches."""
    batches = [b for b in system.get("batches") or [] if b.get("seconds") is not None]
    by_size = bool(batches) and all(b.get("table_rows_before") is not None for b in batches)
    xs = [b["table_rows_before"] if by_size else b.get("index", i + 1) for i, b in enumerate(batches)]
    ys = [max(b["seconds"], 1e-6) * 1000 for b in batches]  # log axis: no zeros
    return xs, ys, by_size


def file_name(workload):
    return re.sub(r"[^\w.-]+", "_", workload).strip("_") or "workload"


def plot(results, out_dir):
    """Write one PNG per workload into out_dir; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    os.makedirs(out_dir, exist_ok=True)
    written = []
    for wname, workload in items(results.get("workloads"), "name"):
        systems = items(workload.get("systems"), "system")
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
        all_by_size = True
        drawn = 0
        for i, (sname, system) in enumerate(systems):
            xs, ys, by_size = series(system)
            if not xs:
                continue
            all_by_size = all_by_size and by_size
            ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.2,
                    label=sname)
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.set_yscale("log")
        # Plain numbers (250, 1000) read better than 2.5x10^2 on a log axis.
        plain = ticker.FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.xaxis.set_major_formatter(ticker.EngFormatter(sep=""))
        ax.set_xlabel("table rows before the batch" if all_by_size else "batch")
        ax.set_ylabel("time per batch (ms, log)")
        ax.set_title(str(workload.get("title") or wname))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        path = os.path.join(out_dir, file_name(wname) + ".png")
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written
