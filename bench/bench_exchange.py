"""Throughput and memory of the exchange engine on linked yes/no books.

    .venv/bin/python bench/bench_exchange.py [--resting 100000] [--ops 1000000] [--seed 1]

1. Builds ``--resting`` non-crossing resting orders (both outcomes, both sides) on one market
   and reports the memory each costs (tracemalloc; the placement results are discarded).
2. Runs ``--ops`` pre-generated operations on one core and reports ops/s: about half are
   crossing orders (marketable limits that fill against the inside through normal, mint and
   merge matches), a tenth cancel a random live resting order of its owner, the rest are new
   resting orders. Generating the flow happens before the clock starts; the timed loop only
   calls the engine and keeps the list of live ids the cancels draw from.
"""

import argparse
import gc
import random
import time
import tracemalloc
from collections import Counter

from predmarket.exchange import Market, Outcome, Side

UNIT = 10**16  # 0.01 share; quantities are small multiples of it
OWNERS = [f"owner-{i}" for i in range(100)]
SIDES = (Side.BUY, Side.SELL)
OUTCOMES = (Outcome.YES, Outcome.NO)
PLACE, CANCEL = 0, 1

# (kind, owner, side, outcome, price, quantity, pick): pick in [0, 1) chooses a cancel's target.
Op = tuple[int, str, Side, Outcome, int, int, float]


def seed_supply(market: Market, sets: int) -> None:
    """Mint ``sets`` complete sets so sell orders have shares to offer."""
    market.place("seed-yes", Side.BUY, Outcome.YES, 500, sets)
    market.place("seed-no", Side.BUY, Outcome.NO, 500, sets)


def resting_order(rng: random.Random) -> Op:
    """A random order that cannot cross: bids at 300..499, asks at 501..700 on both books.

    Yes bid + no bid <= 998 < 1000 and yes ask + no ask >= 1002 > 1000, so no mint or merge
    crosses either.
    """
    side = rng.choice(SIDES)
    price = rng.randint(300, 499) if side is Side.BUY else rng.randint(501, 700)
    qty = rng.randint(1, 10) * UNIT
    return PLACE, rng.choice(OWNERS), side, rng.choice(OUTCOMES), price, qty, 0.0


def crossing_order(rng: random.Random) -> Op:
    """A marketable order: a buy up to 700 / a sell down to 300 takes the inside of a book
    or of its complement (mint / merge). Smaller than resting orders, so the book stays deep."""
    side = rng.choice(SIDES)
    price = 700 if side is Side.BUY else 300
    qty = rng.randint(1, 6) * UNIT
    return PLACE, rng.choice(OWNERS), side, rng.choice(OUTCOMES), price, qty, 0.0


def make_flow(rng: random.Random, n: int) -> list[Op]:
    flow: list[Op] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.5:
            flow.append(crossing_order(rng))
        elif r < 0.6:
            flow.append((CANCEL, "", Side.BUY, Outcome.YES, 0, 0, rng.random()))
        else:
            flow.append(resting_order(rng))
    return flow


def build_book(market: Market, rng: random.Random, n: int, live: list[tuple[str, int]]) -> None:
    for _ in range(n):
        _, owner, side, outcome, price, qty, _ = resting_order(rng)
        result = market.place(owner, side, outcome, price, qty)
        if result.remaining:
            live.append((owner, result.order_id))


def measure_memory(resting: int, seed: int) -> float:
    """Bytes allocated per resting order while building the book (tracemalloc)."""
    market = Market()
    seed_supply(market, 10**30)
    rng = random.Random(seed)
    orders = [resting_order(rng) for _ in range(resting)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _, owner, side, outcome, price, qty, _ in orders:
        market.place(owner, side, outcome, price, qty)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / market.open_order_count


def run_flow(
    market: Market, flow: list[Op], live: list[tuple[str, int]], kinds: Counter[str] | None
) -> tuple[float, int, int]:
    """Apply ``flow``; return (seconds, orders that traded, cancels). ``kinds`` (untimed
    replays only) counts the trades by kind."""
    crossing = cancels = 0
    place = market.place
    cancel = market.cancel
    is_resting = market.is_resting
    gc.collect()
    start = time.perf_counter()
    for kind, owner, side, outcome, price, qty, pick in flow:
        if kind == PLACE:
            result = place(owner, side, outcome, price, qty)
            if result.trades:
                crossing += 1
                if kinds is not None:
                    kinds.update(str(t.kind) for t in result.trades)
            if result.remaining:
                live.append((owner, result.order_id))
        else:
            # Draw a random id from the live list (swap-remove), skipping ids filled since.
            while live:
                i = int(pick * len(live))
                target = live[i]
                live[i] = live[-1]
                live.pop()
                if is_resting(target[1]):
                    cancel(*target)
                    cancels += 1
                    break
    return time.perf_counter() - start, crossing, cancels


def fresh(resting: int, seed: int, ops: int) -> tuple[Market, list[tuple[str, int]], list[Op]]:
    rng = random.Random(seed)
    market = Market()
    seed_supply(market, 10**30)
    live: list[tuple[str, int]] = []
    build_book(market, rng, resting, live)
    return market, live, make_flow(rng, ops)


def run(resting: int, ops: int, seed: int) -> None:
    market, live, flow = fresh(resting, seed, ops)
    elapsed, crossing, cancels = run_flow(market, flow, live, None)
    # Replay the same flow untimed on a fresh market to count trades by kind; the engine is
    # deterministic, so it is the same run.
    kinds: Counter[str] = Counter()
    replay, replay_live, replay_flow = fresh(resting, seed, ops)
    run_flow(replay, replay_flow, replay_live, kinds)
    assert replay.fees_collected == market.fees_collected
    by_kind = ", ".join(f"{kinds[k]:,} {k}" for k in ("normal", "mint", "merge"))
    print(f"resting orders at start : {resting:,}")
    print(f"operations              : {ops:,} in {elapsed:.3f} s")
    print(f"throughput              : {ops / elapsed:,.0f} ops/s (one core)")
    print(f"orders that traded      : {crossing:,} ({crossing / ops:.1%})")
    print(f"trades                  : {sum(kinds.values()):,} ({by_kind})")
    print(f"cancels                 : {cancels:,}")
    print(f"resting orders at end   : {market.open_order_count:,}")
    print(
        f"best yes bid/ask        : {market.best_bid(Outcome.YES)}/{market.best_ask(Outcome.YES)}"
        f", no bid/ask: {market.best_bid(Outcome.NO)}/{market.best_ask(Outcome.NO)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resting", type=int, default=100_000, help="orders in the book first")
    parser.add_argument("--ops", type=int, default=1_000_000, help="operations to time")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the flow")
    parser.add_argument("--skip-memory", action="store_true", help="skip the tracemalloc pass")
    args = parser.parse_args()
    if not args.skip_memory:
        per_order = measure_memory(args.resting, args.seed)
        print(f"memory per resting order: {per_order:,.0f} bytes (tracemalloc)")
    run(args.resting, args.ops, args.seed)


if __name__ == "__main__":
    main()
