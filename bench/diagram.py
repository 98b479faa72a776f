"""Benchmark of the architecture diagrams: `python -m bench.diagram` (also run by bench.run).

Prints one JSON line: {"bench": "diagram", "nodes", "edges", "subgraphs", "repeats",
"parse_median_ms", "render_median_ms", "render_p90_ms", "svg_bytes", "refuse_5000_nodes_ms",
"refuse_1mb_label_ms", "refuse_deep_nesting_ms", "refusals"}. "render" is what a page pays for
a picture it has not drawn before: parse, Graphviz layout in its subprocess, and sanitising
the SVG, for a 40-node design (a gateway, a router, three GPU pools of ten replicas each in
subgraphs, the control plane); medians of wall-clock milliseconds. The refusals are hostile
inputs (5,000 nodes, a 1 MB label, subgraphs nested 50 deep): the worst of five runs, each
refused with a DiagramError, whose messages are in "refusals".
"""

from __future__ import annotations

import json
import statistics
import time

from diagrams import DiagramError, parse_diagram, render_svg

REPEATS = 15


def forty_node_design() -> str:
    """A 40-node flowchart shaped like a real answer: request path, pools, control plane."""
    lines = [
        "flowchart LR",
        "  clients([Clients]) --> gateway[API gateway: TLS, API keys, rate limits]",
        '  gateway --> router{"Router: prefix-aware"}',
    ]
    for pool in range(3):
        lines.append(f"  subgraph pool{pool} [GPU pool {pool + 1}: RTX 4090]")
        for replica in range(10):
            node = f"v{pool}_{replica}"
            lines.append(f"    {node}[(vLLM replica {pool * 10 + replica + 1})]")
        lines.append("  end")
        for replica in range(10):
            lines.append(f"  router -->|prefix hash| v{pool}_{replica}")
    lines += [
        "  storage[(Object store: weights)] -.-> v0_0",
        "  v0_0 -->|/metrics| prometheus[(Prometheus)]",
        "  prometheus -->|queue depth| autoscaler[Autoscaler]",
        "  autoscaler -.->|add or drain| router",
        "  prometheus --> grafana[Grafana: dashboards, alerts]",
        "  v1_0 -.->|traces| jaeger[Jaeger]",
        "  v2_0 -.->|KV blocks| kvtier[(KV offload tier: CPU RAM)]",
        "  autoscaler --> kube[Kubernetes API]",
    ]
    return "\n".join(lines)


def _refusal_ms(text: str) -> tuple[float, str]:
    worst, message = 0.0, ""
    for _ in range(5):
        started = time.perf_counter()
        try:
            parse_diagram(text)
        except DiagramError as exc:
            message = exc.message
        else:
            raise AssertionError("a hostile diagram was not refused")
        worst = max(worst, (time.perf_counter() - started) * 1000)
    return worst, message


def main() -> None:
    text = forty_node_design()
    diagram = parse_diagram(text)
    assert len(diagram.nodes) == 40, len(diagram.nodes)
    render_svg(diagram)  # the first run warms Graphviz's font cache
    parse_ms, render_ms, svg = [], [], ""
    for _ in range(REPEATS):
        started = time.perf_counter()
        parsed = parse_diagram(text)
        parse_ms.append((time.perf_counter() - started) * 1000)
        svg = render_svg(parsed)
        render_ms.append((time.perf_counter() - started) * 1000)

    many_nodes = "flowchart LR\n" + "\n".join(f"n{i} --> n{i + 1}" for i in range(5000))
    huge_label = "flowchart LR\n  a[" + "x" * 1_000_000 + "] --> b"
    deep = "flowchart LR\n" + "".join(f"subgraph s{i}\n" for i in range(50)) + "a\n" + "end\n" * 50
    refusals = {
        "5000_nodes": _refusal_ms(many_nodes),
        "1mb_label": _refusal_ms(huge_label),
        "deep_nesting": _refusal_ms(deep),
    }
    print(
        json.dumps(
            {
                "bench": "diagram",
                "nodes": len(diagram.nodes),
                "edges": len(diagram.edges),
                "subgraphs": len(diagram.subgraphs),
                "repeats": REPEATS,
                "parse_median_ms": round(statistics.median(parse_ms), 2),
                "render_median_ms": round(statistics.median(render_ms), 1),
                "render_p90_ms": round(statistics.quantiles(render_ms, n=10)[-1], 1),
                "svg_bytes": len(svg),
                **{f"refuse_{k}_ms": round(ms, 3) for k, (ms, _) in refusals.items()},
                "refusals": {k: message for k, (_, message) in refusals.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
