#!/usr/bin/env python3
"""bench/nexmark/gen_nexmark.py: a Nexmark event generator (issue 42).

A port of the reference generator of the Nexmark benchmark as the Flink
suite runs it (github.com/nexmark/nexmark, nexmark-flink/.../generator:
NexmarkGenerator, GeneratorConfig, model/{Person,Auction,Bid,Price,Long,
Strings}Generator), with its default NexmarkConfiguration.  Every choice
and deviation is listed in bench/nexmark/README.md; in short:

  * event number n = 0, 1, 2, ...; n % 50 < 1 is a person, < 4 an auction,
    else a bid (proportions 1/3/46);
  * event time of n: base + floor(n * 1e6 / rate) / 1000 ms (timestampForEvent,
    outOfOrderGroupSize = 1: in order); --rate is the reference's
    firstEventRate (default 10,000 events/s, the NexmarkConfiguration
    default);
  * bids: the auction is hot with probability 1 - 1/hotAuctionRatio (2):
    the first of the batch of 100 latest auctions, else a uniform one of
    the last 100 in-flight auctions plus a lead of 10; the bidder is hot
    with probability 1 - 1/hotBiddersRatio (4): the second person of the
    batch of 100 latest persons, else a uniform one of the 1000 active
    persons plus a lead of 10; price = round(10^(U*6) * 100) cents; the
    channel is one of 4 hot channels with probability 1/2 (Google,
    Facebook, Baidu, Apple), else one of 10,000 "channel-i"; the url is
    the channel's; extra pads the bid to 100 bytes on average;
  * persons and auctions are generated with their draws (so the random
    stream advances as in the reference) but only counted, not written:
    q11 and q17 read bids only.

Only random.Random.random() is used, whose sequence is stable across Python
versions (randint/randrange are not): nextInt(n) = floor(random() * n).
The reference's SplittableRandom is not reproduced bit for bit (a
deviation: the distributions are the same, the sequence is not).

Writes CSV (no header) to stdout: id, auction, bidder, price, channel, url,
date_time (ISO, UTC, milliseconds), extra; counts to stderr.
"""
import argparse
import datetime
import math
import random
import sys

FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
PERSON_P, AUCTION_P, BID_P = 1, 3, 46
TOTAL_P = PERSON_P + AUCTION_P + BID_P
# NexmarkConfiguration defaults
HOT_AUCTION_RATIO_CFG = 2
HOT_SELLERS_RATIO_CFG = 4
HOT_BIDDERS_RATIO_CFG = 4
NUM_IN_FLIGHT_AUCTIONS = 100
NUM_ACTIVE_PEOPLE = 1000
AVG_BID_BYTES = 100
# BidGenerator / AuctionGenerator / PersonGenerator constants
HOT_AUCTION_RATIO = 100
HOT_BIDDER_RATIO = 100
HOT_SELLER_RATIO = 100
HOT_CHANNELS_RATIO = 2
CHANNELS_NUMBER = 10000
HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
AUCTION_ID_LEAD = 10
PERSON_ID_LEAD = 10
NUM_CATEGORIES = 5
MIN_STRING_LENGTH = 3


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.rnd = self.r.random

    def next_int(self, n):
        return int(self.rnd() * n)

    def next_string(self, max_length, special=' '):
        n = MIN_STRING_LENGTH + self.next_int(max_length - MIN_STRING_LENGTH)
        out = []
        for _ in range(n):
            if self.next_int(13) == 0:
                out.append(special)
            else:
                out.append(chr(97 + self.next_int(26)))
        return ''.join(out).strip()


def last_base0_person_id(event_id):
    epoch, offset = divmod(event_id, TOTAL_P)
    if offset >= PERSON_P:
        offset = PERSON_P - 1
    return epoch * PERSON_P + offset


def last_base0_auction_id(event_id):
    epoch, offset = divmod(event_id, TOTAL_P)
    if offset < PERSON_P:
        epoch -= 1
        offset = AUCTION_P - 1
    elif offset >= PERSON_P + AUCTION_P:
        offset = AUCTION_P - 1
    else:
        offset -= PERSON_P
    return epoch * AUCTION_P + offset


def next_base0_person_id(g, event_id):
    num_people = last_base0_person_id(event_id) + 1
    active = min(num_people, NUM_ACTIVE_PEOPLE)
    return num_people - active + g.next_int(active + PERSON_ID_LEAD)


def next_base0_auction_id(g, event_id):
    max_a = last_base0_auction_id(event_id)
    min_a = max(max_a - NUM_IN_FLIGHT_AUCTIONS, 0)
    return min_a + g.next_int(max_a - min_a + 1 + AUCTION_ID_LEAD)


def next_price(g):
    return round(math.pow(10.0, g.rnd() * 6.0) * 100.0)


def base_url(g):
    return ("https://www.nexmark.com/" + g.next_string(5, '_') + '/' +
            g.next_string(5, '_') + '/' + g.next_string(5, '_') + '/' +
            "item.htm?query=1")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--events', type=int, default=2000000)
    ap.add_argument('--rate', type=int, default=10000,
                    help='firstEventRate: events per second of event time')
    ap.add_argument('--seed', type=int, default=42)
    ap.add_argument('--base', default='2026-11-30T00:00:00',
                    help='baseTime (UTC)')
    a = ap.parse_args()
    g = Gen(a.seed)
    base = datetime.datetime.fromisoformat(a.base).replace(tzinfo=datetime.timezone.utc)
    base_ms = int(base.timestamp()) * 1000
    delay_us = 1000000.0 / a.rate
    hot_urls = [base_url(g) for _ in range(4)]
    cache = []
    for i in range(CHANNELS_NUMBER):
        url = base_url(g)
        if g.next_int(10) > 0:
            # Math.abs(Integer.reverse(i))
            rev = int('{:032b}'.format(i)[::-1], 2)
            if rev >= 1 << 31:
                rev -= 1 << 32
            url += "&channel_id=" + str(abs(rev))
        cache.append(("channel-%d" % i, url))
    # StringsGenerator.REUSABLE_EXTRA_STRING: 1 MiB of letters
    reusable = ''.join(chr(97 + g.next_int(26)) for _ in range(1 << 20))
    out = sys.stdout
    w = out.write
    persons = auctions = bids = 0
    last_ms = None
    last_txt = None
    for n in range(a.events):
        ms = base_ms + int(n * delay_us) // 1000
        rem = n % TOTAL_P
        if rem < PERSON_P:
            persons += 1
            # name, email, credit card, city, state, extra: draws only
            g.next_int(11); g.next_int(9)
            g.next_string(7); g.next_string(5)
            for _ in range(4):
                g.next_int(10000)
            g.next_int(10); g.next_int(6)
            g.next_int(1)
        elif rem < PERSON_P + AUCTION_P:
            auctions += 1
            if g.next_int(HOT_SELLERS_RATIO_CFG) == 0:
                next_base0_person_id(g, n)
            g.next_int(NUM_CATEGORIES)
            next_price(g)
            g.next_int(1)       # auction length
            g.next_string(20); g.next_string(100)
            next_price(g)
            g.next_int(1)       # extra
        else:
            bids += 1
            if g.next_int(HOT_AUCTION_RATIO_CFG) > 0:
                auction = (last_base0_auction_id(n) // HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO
            else:
                auction = next_base0_auction_id(g, n)
            auction += FIRST_AUCTION_ID
            if g.next_int(HOT_BIDDERS_RATIO_CFG) > 0:
                bidder = (last_base0_person_id(n) // HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1
            else:
                bidder = next_base0_person_id(g, n)
            # the reference adds FIRST_PERSON_ID twice (BidGenerator.nextBid)
            bidder += 2 * FIRST_PERSON_ID
            price = next_price(g)
            if g.next_int(HOT_CHANNELS_RATIO) > 0:
                i = g.next_int(4)
                channel, url = HOT_CHANNELS[i], hot_urls[i]
            else:
                channel, url = cache[g.next_int(CHANNELS_NUMBER)]
            # nextExtra(currentSize 32, average 100): 68 +- 20 %
            want = AVG_BID_BYTES - 32
            delta = round(want * 0.2)
            size = want - delta + g.next_int(2 * delta)
            off = g.next_int(len(reusable) - size)
            if ms != last_ms:
                last_ms = ms
                last_txt = (datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
                            .strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (ms % 1000))
            w('%d,%d,%d,%d,%s,"%s",%s,%s\n' % (n, auction, bidder, price, channel, url,
                                               last_txt, reusable[off:off + size]))
    print('events %d persons %d auctions %d bids %d event_time_span_s %.3f'
          % (a.events, persons, auctions, bids, (a.events - 1) * delay_us / 1e6),
          file=sys.stderr)


if __name__ == '__main__':
    main()
