"""Queueing theory to check the simulator against, and a plain M/M/c simulation to time it by.

Erlang C gives an M/M/c queue's chance that an arrival waits and its mean wait; the
simulator, run as one replica of c slots with steps far shorter than a service, exponential
output lengths and no prefill, is an M/M/c queue and must land on them.
"""

from __future__ import annotations

import heapq
import math


def erlang_c(*, servers: int, arrival_rate: float, service_rate: float) -> tuple[float, float]:
    """(P(wait), mean wait in s) of an M/M/c queue: c servers, Poisson arrivals at
    arrival_rate (req/s), exponential services at service_rate (req/s per server). Needs
    arrival_rate < servers x service_rate."""
    a = arrival_rate / service_rate  # offered load, Erlangs
    rho = a / servers
    if rho >= 1:
        raise ValueError("An M/M/c queue at or past saturation has no steady state.")
    # Sum_{k<c} a^k / k!, built term by term to stay finite for large c.
    term, total = 1.0, 1.0
    for k in range(1, servers):
        term *= a / k
        total += term
    last = term * a / servers  # a^c / c!
    top = last / (1 - rho)
    p_wait = top / (total + top)
    return p_wait, p_wait / (servers * service_rate - arrival_rate)


def mmc_waits(arrivals: list[float], services: list[float], servers: int) -> list[float]:
    """Each request's wait in a first-come first-served queue of `servers` servers, given its
    arrival time and service time (s): the plain M/M/c simulation the bench compares with."""
    free = [0.0] * servers  # when each server frees up, as a heap
    waits = []
    for a, s in zip(arrivals, services, strict=True):
        start = max(a, free[0])
        heapq.heapreplace(free, start + s)
        waits.append(start - a)
    return waits


def mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0
