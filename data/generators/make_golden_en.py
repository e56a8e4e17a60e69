"""Build data/golden/en.jsonl, the English golden query set.

What it is: the hand-written queries about the manuals, policies and notes (kept below as
data), plus queries generated from the numbers of make_reports.py, so that the spans of
report queries are the generator's own sentences and are verbatim by construction. Every
span is then checked against the corpus on disk: it must occur exactly once in its
document's text (front matter removed). Splits are assigned by a seeded shuffle within each
kind, 40 % dev and 60 % test.

Kinds (see data/README.md): lexical (shares distinctive words with the passage),
paraphrase (avoids them), contextual (the passage does not name what the question names:
the company and quarter of a report, or the heading path of a manual section), multi-hop
(two documents), unanswerable (plausible, but the corpus has no answer; golden is []).

What it is not: a measure of answer quality. The reference answers are short sentences for
answer-level metrics; retrieval is judged by the spans.

Limits: report queries depend on make_reports.py; re-run this script after changing it.
Contextual report queries only use sentences that start after the first 512 default tokens
of a report, so that the sentence never shares a default-size chunk with the title.

Usage:
    python data/generators/make_golden_en.py          # (re)write data/golden/en.jsonl
    python data/generators/make_golden_en.py --check  # exit 1 if the file differs
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from _output import write_or_check  # noqa: E402  (this folder is on sys.path)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_reports as mr  # noqa: E402

SEED = 7
DATA = Path(__file__).resolve().parents[1]
CORPUS = DATA / "corpus"
OUT = DATA / "golden" / "en.jsonl"
N_CONTEXTUAL_REPORTS = 42
KIND_ORDER = ("lexical", "paraphrase", "contextual", "multi-hop", "unanswerable")

KESTREL = "manuals/kestrel-eg400-manual.md"
FERNWAY = "manuals/fernway-api-reference.md"
REFUND = "policies/en/refund-policy.md"
SHIPPING = "policies/en/shipping-policy.md"
PRIVACY = "policies/en/privacy-and-retention-policy.md"
TRAVEL = "policies/en/travel-and-expense-policy.md"
WARRANTY = "policies/en/warranty-and-repairs-policy.md"
FAQ = "notes/it-onboarding-faq.md"
OPS = "notes/ops-sync-2025-03-12.md"
SUPPLIER = "notes/supplier-portal-faq.md"

# (kind, question, answer, [(doc_id, span), ...])
HANDWRITTEN: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    # ---------------------------------------------------------------- lexical
    ("lexical", "What is the default IP address of the Kestrel EG-400's ETH2 port?",
     "ETH2 has the fixed address 192.168.50.1/24.",
     [(KESTREL, "ETH2 has the fixed address 192.168.50.1/24")]),
    ("lexical", "What does Modbus exception code 02 mean on the Kestrel EG-400?",
     "Illegal data address: the register does not exist on the device (often an off-by-one address).",
     [(KESTREL, "Exception code 02 (illegal data address) means the register does not exist on the device")]),
    ("lexical", "Why is the OPC UA security policy Basic128Rsa15 not supported by the EG-400?",
     "Because it is considered broken.",
     [(KESTREL, "the security policy Basic128Rsa15 is not supported because it is considered broken")]),
    ("lexical", "What does the error BadCertificateUntrusted mean on the Kestrel gateway?",
     "The OPC UA server has not yet trusted the gateway's certificate.",
     [(KESTREL, "\"BadCertificateUntrusted\" means the server has not yet trusted the gateway's certificate")]),
    ("lexical", "What does a blinking amber STATUS LED mean on the EG-400?",
     "A destination cannot be reached and data is being buffered.",
     [(KESTREL, "A destination cannot be reached; data is being buffered")]),
    ("lexical", "How long must the RESET button of the EG-400 be held for a factory reset?",
     "10 seconds while the unit is running, until the status LED flashes white.",
     [(KESTREL, "hold the recessed RESET button for 10 seconds while the unit is running until the status LED flashes white")]),
    ("lexical", "What does the insufficient_stock error mean in the Fernway API?",
     "A line item asks for more units than are available; the response lists the affected products.",
     [(FERNWAY, "At least one line item asks for more units than are available; the response lists the affected products.")]),
    ("lexical", "Which header carries the signature of Fernway webhook deliveries?",
     "The Fernway-Signature header, signed with the subscription's secret.",
     [(FERNWAY, "Each delivery is signed with the subscription's secret in the `Fernway-Signature` header.")]),
    ("lexical", "What prefix do Fernway test API keys have?",
     "Test keys start with fw_test_ and use a separate copy of the store's data.",
     [(FERNWAY, "Test keys start with `fw_test_` and operate on a separate copy of the store's data.")]),
    ("lexical", "When does the Fernway API return amount_exceeds_balance?",
     "When a refund amount is larger than the part of the order not yet refunded.",
     [(FERNWAY, "The amount is larger than the part of the order that has not been refunded yet.")]),
    ("lexical", "How long is the cooling-off period in the Larkspur & Vale returns and refund policy?",
     "21 days, starting the day after delivery.",
     [(REFUND, "You may cancel an order for any reason, without giving a reason, during a cooling-off period of 21 days.")]),
    ("lexical", "How much extra store credit does Larkspur & Vale add when a customer chooses store credit instead of a refund?",
     "Store credit is topped up with 10% of the refunded amount.",
     [(REFUND, "Instead of a refund you may choose store credit, which we top up with 10% of the refunded amount.")]),
    ("lexical", "What does parcel delivery cost in the Netherlands for an order of €60 or more?",
     "It is free (€4.95 in other countries).",
     [(SHIPPING, "| Parcel delivery, order of €60 or more | free | €4.95 |")]),
    ("lexical", "How much does Larkspur & Vale charge to take away old furniture with a two-person delivery?",
     "€35 per item.",
     [(SHIPPING, "our team can take away an old item of the same kind, for example an old sofa when delivering a new one, for €35 per item")]),
    ("lexical", "How long are CCTV recordings in Larkspur & Vale showrooms kept?",
     "30 days, unless needed to investigate an incident.",
     [(PRIVACY, "30 days, unless needed to investigate an incident")]),
    ("lexical", "What mileage rate does the travel and expense policy pay for a private car?",
     "€0.30 per kilometre, covering fuel, wear and insurance.",
     [(TRAVEL, "Use of your own car for business trips is reimbursed at €0.30 per kilometre, which covers fuel, wear and insurance.")]),
    ("lexical", "What is the maximum hotel rate per night in Amsterdam under the travel policy?",
     "€210 per night, including breakfast and taxes.",
     [(TRAVEL, "| Amsterdam, Paris, London, Copenhagen | €210 |")]),
    ("lexical", "What warranty do Hollis mattresses have?",
     "A ten-year warranty against sagging of more than 2.5 cm.",
     [(WARRANTY, "Mattresses in the Hollis range have a ten-year warranty against sagging of more than 2.5 cm.")]),
    ("lexical", "Which Wi-Fi network do visitors use at the Utrecht office, and how often does its password change?",
     "LV-Guest; the password changes every Monday.",
     [(FAQ, "Visitors use the network LV-Guest; its password changes every Monday and is shown on the screens at reception.")]),
    ("lexical", "Until what time is the Utrecht showroom returns desk open on Thursdays from 1 April?",
     "Until 20:00.",
     [(OPS, "from 1 April the returns desk in the Utrecht showroom stays open until 20:00 on Thursdays")]),
    ("lexical", "Within how many days are suppliers paid after submitting a correct invoice in the supplier portal?",
     "Within 45 days of receipt of a correct invoice.",
     [(SUPPLIER, "Suppliers are paid within 45 days of receipt of a correct invoice")]),
    ("lexical", "How many variants may a product have when it is created through the Fernway API?",
     "At most 100 variants.",
     [(FERNWAY, "More than 100 variants were given.")]),
    # ---------------------------------------------------------------- paraphrase
    ("paraphrase", "If I just change my mind about something I bought from the homeware shop, how long do I have to back out?",
     "21 days after delivery, without giving a reason.",
     [(REFUND, "You may cancel an order for any reason, without giving a reason, during a cooling-off period of 21 days.")]),
    ("paraphrase", "Can I send back sleeping accessories once I have broken their seal?",
     "No: for hygiene reasons, unsealed bedding, pillows and mattress protectors cannot be returned.",
     [(REFUND, "bedding, pillows and mattress protectors that have been unsealed after delivery, for reasons of hygiene")]),
    ("paraphrase", "How quickly is my money paid back after I tell the store I am withdrawing from the purchase?",
     "Within 14 days of the cancellation (possibly after the goods are back or proof of sending).",
     [(REFUND, "We refund within 14 days of receiving your cancellation.")]),
    ("paraphrase", "I paid extra for next-day shipping and then sent everything back. Is the premium shipping fee returned?",
     "No, only the cost of standard delivery is refunded.",
     [(REFUND, "If you chose a more expensive delivery option, such as evening or express delivery, we refund only the cost of standard delivery.")]),
    ("paraphrase", "What happens to a package that the courier could not hand over to me twice?",
     "It goes to a nearby pick-up point, is held for 10 days, then returned.",
     [(SHIPPING, "where it is held for 10 days before it is returned to us")]),
    ("paraphrase", "How soon after I buy something that is available does it get sent out?",
     "In-stock items leave the warehouse within 2 working days.",
     [(SHIPPING, "Items shown as \"in stock\" leave our warehouse within 2 working days of the order.")]),
    ("paraphrase", "My order is more than a month late. Can I still call it off even though my two weeks to change my mind are over?",
     "Yes: after a delay of more than 30 days beyond the original date you can cancel for a full refund.",
     [(SHIPPING, "If the delay is more than 30 days beyond the date we originally gave, you may cancel the order free of charge and receive a full refund, even if the cooling-off period has ended.")]),
    ("paraphrase", "Will the delivery crew carry a heavy couch up to a fourth-storey flat with no elevator?",
     "No: without a lift, they carry items up no more than three floors.",
     [(SHIPPING, "provided there is a lift or the goods are taken up no more than three floors")]),
    ("paraphrase", "If I stop using my customer profile, when will the shop erase it?",
     "24 months after the last login or order (with a reminder one month before).",
     [(PRIVACY, "until you close it, or 24 months after your last login or order")]),
    ("paraphrase", "How fast must the retailer inform the regulator after a leak of personal information?",
     "Within 72 hours of becoming aware of the breach.",
     [(PRIVACY, "we notify the supervisory authority within 72 hours of becoming aware of it")]),
    ("paraphrase", "How long may the shop take to respond when I ask for a copy of everything it holds about me?",
     "30 days, extendable by two months for complex requests.",
     [(PRIVACY, "We answer within 30 days of receiving the request")]),
    ("paraphrase", "Does the shop get to see all the digits of my bank card when I pay?",
     "No, it receives only the last four digits and expiry date, never the full number or security code.",
     [(PRIVACY, "but never the full card number or security code")]),
    ("paraphrase", "When are staff allowed to fly in something better than the cheapest cabin?",
     "Premium economy for scheduled flight times over 8 hours; business class needs executive board approval.",
     [(TRAVEL, "For flights with a scheduled flight time of more than 8 hours, premium economy may be booked")]),
    ("paraphrase", "How long after getting back from a work trip do employees have to ask for their money back?",
     "Within 30 days of the end of the trip.",
     [(TRAVEL, "Submit expense claims in the expense system within 30 days of the end of the trip or of the date on which the cost was incurred.")]),
    ("paraphrase", "How much does an employee get per day for food while working in another country?",
     "€55 per day, reduced when meals are provided.",
     [(TRAVEL, "you receive a daily allowance of €55 for meals and incidental costs")]),
    ("paraphrase", "Can I hold on to the rewards airlines give me when the company paid for the ticket?",
     "Yes, if collecting them does not influence choices or raise the cost of the trip.",
     [(TRAVEL, "You may keep airline miles and hotel points earned on business travel")]),
    ("paraphrase", "The reclining part of my couch gave out after three years. Am I still protected?",
     "Yes: frames and mechanisms carry a five-year manufacturer's warranty.",
     [(WARRANTY, "Furniture frames and mechanisms, such as recliner and sofa-bed mechanisms, have a five-year manufacturer's warranty.")]),
    ("paraphrase", "For how long after a furniture collection stops being sold can I still get replacement pieces?",
     "At least seven years.",
     [(WARRANTY, "for at least seven years after a range is discontinued")]),
    ("paraphrase", "How many field machines can the factory-floor gateway query over the serial register protocol at most?",
     "64 devices and 4,000 registers in total.",
     [(KESTREL, "The gateway polls at most 64 devices and 4,000 registers in total.")]),
    ("paraphrase", "What makes the gateway slow its processor down when the enclosure gets too hot?",
     "An internal temperature above 85 °C; it throttles and raises system.overtemperature.",
     [(KESTREL, "When the internal temperature exceeds 85 °C, the gateway reduces the clock speed of its processor")]),
    ("paraphrase", "How long does the gateway keep the correct time if it is unplugged?",
     "About 7 days.",
     [(KESTREL, "The built-in real-time clock keeps time for about 7 days without power")]),
    ("paraphrase", "How do I stop a repeated purchase request from producing two orders?",
     "Send an idempotency key; a retry with the same key returns the original order.",
     [(FERNWAY, "Retrying with the same key returns the original order instead of creating a second one.")]),
    ("paraphrase", "Can a shopper's money be returned to a different bank account than the one they paid with?",
     "No, refunds go only to the original payment method.",
     [(FERNWAY, "Refunds are sent to the original payment method; the API cannot refund to a different card or account.")]),
    # ---------------------------------------------------------------- contextual (heading path)
    ("contextual", "What is the rate limit for creating an order in the Fernway API?",
     "120 requests per minute per API key (write bucket), bursts of up to 20.",
     [(FERNWAY, "The limit is 120 requests per minute per API key, with bursts of up to 20 requests.")]),
    ("contextual", "What is the rate limit of the Fernway endpoint that creates a refund?",
     "30 requests per minute per API key, bursts of up to 5, and 1,000 refunds per store per day.",
     [(FERNWAY, "The limit is 30 requests per minute per API key, with bursts of up to 5 requests.")]),
    ("contextual", "How many requests per minute may a client send to the Fernway endpoint that deletes a customer?",
     "20 requests per minute, bursts of up to 5.",
     [(FERNWAY, "The limit is 20 requests per minute per API key, with bursts of up to 5 requests.")]),
    ("contextual", "What burst size does the Fernway API allow when tracking a shipment?",
     "Bursts of up to 30 requests (240 per minute).",
     [(FERNWAY, "The limit is 240 requests per minute per API key, with bursts of up to 30 requests.")]),
    ("contextual", "How many clients can be connected to the EG-400's Wi-Fi access point at the same time?",
     "At most 16 clients.",
     [(KESTREL, "At most 16 clients can be connected at the same time.")]),
    ("contextual", "What is the largest message the EG-400 can publish to an MQTT broker?",
     "256 KB; larger batches are split.",
     [(KESTREL, "The largest message is 256 KB; batches larger than that are split.")]),
    ("contextual", "How many certificates can the Kestrel EG-400 store?",
     "Up to 32 certificates.",
     [(KESTREL, "The gateway stores up to 32 certificates.")]),
    ("contextual", "How many local user accounts can be created on the Kestrel EG-400?",
     "At most 50 local accounts.",
     [(KESTREL, "At most 50 local accounts can be created.")]),
    ("contextual", "How long does the Kestrel EG-400 keep its audit log?",
     "The last 100,000 entries or 365 days, whichever is reached first.",
     [(KESTREL, "The gateway keeps the last 100,000 entries or 365 days, whichever limit is reached first.")]),
    ("contextual", "On the EG-400, how long can a partial batch wait before it is sent to an HTTPS destination?",
     "At most 60 seconds (batches hold up to 1,000 readings or 1 MB).",
     [(KESTREL, "A batch holds at most 1,000 readings or 1 MB, whichever is reached first, and a partial batch waits at most 60 seconds.")]),
    ("contextual", "How many threshold rules can be active on the Kestrel EG-400?",
     "Up to 500 rules.",
     [(KESTREL, "Up to 500 rules can be active.")]),
    # ---------------------------------------------------------------- multi-hop
    ("multi-hop", "How much longer is Larkspur & Vale's cooling-off period than the window for reporting damaged or missing items after delivery?",
     "14 days longer: 21 days to cancel versus 7 days to report damage.",
     [(REFUND, "You may cancel an order for any reason, without giving a reason, during a cooling-off period of 21 days."),
      (SHIPPING, "Report missing or damaged items within 7 days of delivery through your account, with photos.")]),
    ("multi-hop", "Which lasts longer at Larkspur & Vale: the retention of customer service messages or the validity of store credit?",
     "Store credit (24 months) lasts longer than customer service messages are kept (18 months after closing).",
     [(PRIVACY, "18 months after the case is closed"),
      (REFUND, "Store credit is valid for 24 months and can be used for any purchase except gift cards.")]),
    ("multi-hop", "Do Larkspur & Vale's parcel weight limit and the Fernway API's shipment weight limit agree?",
     "Yes: both are 31.5 kg (31,500 grams).",
     [(SHIPPING, "Small and medium items, up to 31.5 kg per parcel, are sent by parcel service."),
      (FERNWAY, "The weight exceeds the carrier's limit of 31,500 grams.")]),
    ("multi-hop", "How quickly does Larkspur & Vale reply to a complaint about a return, and to a complaint about a warranty assessment?",
     "Within 10 working days in both cases.",
     [(REFUND, "If you are not satisfied with how we handled a return, you can file a complaint in your account; we reply within 10 working days."),
      (WARRANTY, "If you disagree with our assessment of a fault, you can file a complaint in your account; we reply within 10 working days.")]),
    # ---------------------------------------------------------------- unanswerable
    ("unanswerable", "What was Northwind Robotics' revenue in Q3 2022?",
     "The corpus has no Northwind Robotics report for Q3 2022 (the reports look back at most to Q1 2023).", []),
    ("unanswerable", "How much free cash flow did Halvorsen Maritime generate in Q1 2026?",
     "The corpus has no report for Q1 2026.", []),
    ("unanswerable", "What was Zephyrine Aerospace's operating margin in Q2 2025?",
     "The corpus has no reports for Zephyrine Aerospace.", []),
    ("unanswerable", "Who is the chief executive of Cedarline Health?",
     "The reports do not name the chief executive.", []),
    ("unanswerable", "What is the rate limit of the Fernway API's invoices endpoint?",
     "The Fernway API reference has no invoices endpoint.", []),
    ("unanswerable", "What was Tessellate Semiconductors' share price at the end of Q4 2025?",
     "The reports do not give share prices.", []),
    ("unanswerable", "What is the mean time between failures of the Kestrel EG-400?",
     "The manual does not state an MTBF.", []),
    ("unanswerable", "Does the Kestrel EG-400 support the BACnet protocol?",
     "The manual does not mention BACnet.", []),
    ("unanswerable", "How many weeks of parental leave do Larkspur & Vale employees get?",
     "No policy in the corpus covers parental leave.", []),
    ("unanswerable", "How many stores did Orchard Lane Retail operate at the end of Q2 2025?",
     "The reports mention store openings and closures but never the total number of stores.", []),
    ("unanswerable", "Does the Fernway API support GraphQL queries?",
     "The reference describes only the REST API.", []),
    ("unanswerable", "What was Quillmark Publishing's revenue from audiobooks in Q4 2025?",
     "Audiobook revenue is not reported separately.", []),
    ("unanswerable", "Which carrier does Larkspur & Vale use for parcel deliveries to Denmark?",
     "The shipping policy does not name carriers by country.", []),
    ("unanswerable", "What was Solvara Energy's revenue in Q4 2022?",
     "The corpus has no Solvara Energy report for Q4 2022 (the reports look back at most to Q1 2023).", []),
]


# --------------------------------------------------------------------------- report queries
def poss(name: str) -> str:
    """English possessive: "Northwind Robotics'" but "Brightwater Foods'" and "Cedarline Health's"."""
    return name + ("'" if name.endswith("s") else "'s")


def _money(v: float) -> str:
    return f"${v:,.1f} million" if v >= 0 else f"negative ${-v:,.1f} million"


def _qlabel(info: dict) -> str:
    return info["label"]


def _prev_label(info: dict) -> str:
    y, q = info["year"], info["q"]
    return f"Q{q - 1} {y}" if q > 1 else f"Q4 {y - 1}"


def _contextual_question(kind: str, f: dict, info: dict, rng: random.Random) -> tuple[str, str] | None:
    """Return (question, answer) for a fact of a report, or None for kinds not asked."""
    c, q = info["company"], _qlabel(info)
    if kind == "revenue":
        g = f["g"]
        verb = "grew" if g > 0 else "fell" if g < 0 else "was unchanged"
        ans = (f"Revenue {verb} {abs(g)}% over the previous quarter, to ${f['rev']:,.1f} million." if g
               else f"Revenue was unchanged from the previous quarter at ${f['rev']:,.1f} million.")
        qs = [f"By how much did {poss(c)} revenue change in {q} compared with {_prev_label(info)}?",
              f"How did {poss(c)} revenue in {q} compare with the previous quarter?"]
        return rng.choice(qs), ans
    if kind == "yoy":
        return (f"How did {poss(c)} revenue in {q} compare with the same quarter a year earlier?",
                f"It was {'up' if f['yoy'] >= 0 else 'down'} {abs(f['yoy'])}% year over year.")
    if kind == "geo":
        return (f"What share of {poss(c)} revenue came from Europe in {q}?", f"Europe accounted for {f['eu']}% of revenue.")
    if kind == "recurring":
        return (f"What proportion of {poss(c)} revenue in {q} was recurring?", f"Recurring revenue was {f['rec']}% of the total.")
    if kind == "segment":
        return (f"How did {poss(c)} {f['segment']} segment perform in {q}?",
                f"{f['segment']} revenue was ${f['srev']:,.1f} million ({f['chg']:+.1f}% on the previous quarter), "
                f"with an operating margin of {f['sm']}%.")
    if kind == "intake":
        return (f"What was {poss(c)} book-to-bill ratio in {q}?",
                f"Order intake of ${f['intake']:,.1f} million gave a book-to-bill ratio of {f['btb']:.2f}.")
    if kind == "top10":
        return (f"How much of {poss(c)} revenue in {q} came from its ten largest customers?", f"{f['top10']}% of revenue.")
    if kind == "new_customers":
        return (f"How many new customers did {c} win in {q}?", f"{f['new_cust']} new customers.")
    if kind == "comparable":
        return (f"How did {poss(c)} comparable-store sales develop in {q}?",
                f"Comparable-store sales were {'up' if f['cs'] >= 0 else 'down'} {abs(f['cs'])}% on the previous quarter.")
    if kind == "basket":
        return (f"What was the average transaction value at {c} in {q}?", f"${f['basket']} per transaction.")
    if kind == "opex":
        return (f"What were {poss(c)} total operating expenses in {q}?",
                f"${f['opex']:,.1f} million, {f['opex_pct']}% of revenue.")
    if kind == "rd":
        return (f"How much did {c} spend on research and development in {q}?", f"${f['rd']:,.1f} million.")
    if kind == "opinc":
        return (f"What operating margin did {c} report for {q}?",
                f"Operating income of {_money(f['oi'])}, an operating margin of {f['om']}%.")
    if kind == "headcount":
        return (f"How many employees did {c} have at the end of {q}?",
                f"{f['hc']:,} employees, a net change of {f['dh']:+,} during the quarter.")
    if kind == "fcf":
        return (f"How much free cash flow did {c} generate in {q}?", f"Free cash flow was {_money(f['fcf'])}.")
    if kind == "balance":
        return rng.choice([
            (f"How much cash did {c} hold at the end of {q}?", f"Cash and cash equivalents of ${f['cash']:,.1f} million."),
            (f"What was {poss(c)} total debt at the end of {q}?", f"Total debt was ${f['debt']:,.1f} million."),
        ])
    if kind == "dso":
        return (f"What were {poss(c)} days sales outstanding in {q}?", f"{f['dso']} days, against {f['dso_prev']} a quarter earlier.")
    if kind == "payout":
        if f["bb"]:
            return (f"How much did {c} spend on share repurchases in {q}?", f"${f['bb']:,.1f} million.")
        return (f"What quarterly dividend per share did {c} declare in {q}?", f"${f['div']:.2f} per share.")
    if kind == "turnover":
        return (f"What voluntary staff turnover did {c} report in {q}?", f"{f['turnover']}% over the last twelve months.")
    if kind == "training":
        return (f"How many hours of training did {poss(c)} employees receive on average in {q}?", f"{f['training']} hours.")
    if kind == "engagement":
        if "recommend" in f["span"]:
            return (f"What share of {poss(c)} employees would recommend it as a place to work, according to its {q} survey?",
                    f"{f['engagement']}% of respondents.")
        return (f"What employee engagement score did {c} report for {q}?", f"{f['engagement']} out of 100.")
    if kind == "emissions":
        e = f["emis"]
        return (f"How did {poss(c)} Scope 1 and 2 emissions change in {q}?",
                "They were unchanged." if e == 0 else f"They were {'down' if e < 0 else 'up'} {abs(e)}% on the previous quarter.")
    if kind == "ltir":
        return (f"What lost-time injury rate did {c} record in {q}?", f"{f['ltir']:.2f} per 200,000 hours worked.")
    if kind == "renewable":
        return (f"What share of the electricity used by {c} came from renewable sources in {q}?", f"{f['renew']}%.")
    if kind == "guidance":
        return (f"What revenue did {c}, in its {q} report, expect for the following quarter?",
                f"Between ${f['lo']:,.0f} million and ${f['hi']:,.0f} million.")
    if kind == "guide_gm":
        return (f"What gross margin did {c} expect for the quarter after {q}?", f"Around {f['ggm']}%.")
    return None


CONTEXTUAL_KINDS = ("revenue", "fcf", "headcount", "rd", "guidance", "balance", "dso", "opinc", "yoy", "opex",
                    "revenue", "segment", "geo", "ltir", "turnover", "intake", "emissions", "renewable", "payout",
                    "revenue", "fcf", "top10", "new_customers", "training", "guide_gm", "recurring", "engagement",
                    "comparable", "basket")


def report_queries(reports: dict) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    rng = random.Random(SEED)
    out: list[tuple[str, str, str, list[tuple[str, str]]]] = []
    # lexical: one event question per company, from the two that have one
    for c in mr.COMPANIES:
        idx = rng.choice(sorted(c.event_questions))
        y, q = mr.QUARTERS[idx]
        did = mr.doc_id(c, y, q)
        ev = next(f for f in reports[did][1] if f["kind"] == "event")
        question, answer = c.event_questions[idx]
        out.append(("lexical", question, answer, [(did, ev["span"])]))
    # contextual: one fact per report, kinds in rotation, only sentences past token 512
    ids = sorted(reports)
    rng.shuffle(ids)
    k = 0
    for did in ids[:N_CONTEXTUAL_REPORTS]:
        facts = [f for f in reports[did][1] if f["token_start"] >= 512]
        for step in range(len(CONTEXTUAL_KINDS)):
            kind = CONTEXTUAL_KINDS[(k + step) % len(CONTEXTUAL_KINDS)]
            cands = [f for f in facts if f["kind"] == kind]
            if cands:
                f = rng.choice(cands)
                qa = _contextual_question(kind, f, reports[did][2], rng)
                if qa:
                    out.append(("contextual", qa[0], qa[1], [(did, f["span"])]))
                    k += step + 1
                    break
    out += multi_hop(reports, rng)
    return out


def _fact(reports: dict, did: str, kind: str) -> dict:
    return next(f for f in reports[did][1] if f["kind"] == kind)


def multi_hop(reports: dict, rng: random.Random) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    out = []
    comps = list(mr.COMPANIES)
    # A: two companies, same quarter
    specs = [("fcf", "Which generated more free cash flow in {q}, {a} or {b}?", "fcf", _money),
             ("rd", "Which spent more on research and development in {q}, {a} or {b}?", "rd", _money),
             ("headcount", "Which had more employees at the end of {q}, {a} or {b}?", "hc", lambda v: f"{v:,} employees"),
             ("revenue", "Whose revenue grew faster over the previous quarter in {q}, {a} or {b}?", "g", lambda v: f"{v:+d}%"),
             ("ltir", "Which had the lower lost-time injury rate in {q}, {a} or {b}?", "ltir", lambda v: f"{v:.2f}"),
             ("dso", "Which had the lower days sales outstanding in {q}, {a} or {b}?", "dso", lambda v: f"{v} days")]
    for kind, tmpl, key, fmt in specs:
        a, b = rng.sample(comps, 2)
        y, q = rng.choice(mr.QUARTERS)
        da, db = mr.doc_id(a, y, q), mr.doc_id(b, y, q)
        fa, fb = _fact(reports, da, kind), _fact(reports, db, kind)
        va, vb = fa[key], fb[key]
        lower_better = kind in ("ltir", "dso")
        if va == vb:
            continue
        win, lose, wv, lv = (a, b, va, vb) if (va < vb) == lower_better else (b, a, vb, va)
        ans = f"{win.name} ({fmt(wv)}, against {fmt(lv)} for {lose.name})."
        out.append(("multi-hop", tmpl.format(q=f"Q{q} {y}", a=a.name, b=b.name), ans, [(da, fa["span"]), (db, fb["span"])]))
    # B: one company, the same quarter one year apart
    specs_b = [("headcount", "How did {cp} headcount change between the end of {q1} and the end of {q2}?", "hc",
                lambda v1, v2: f"From {v1:,} to {v2:,} employees ({v2 - v1:+,})."),
               ("fcf", "How did {cp} free cash flow in {q2} compare with {q1}?", "fcf",
                lambda v1, v2: f"{_money(v2)} in the later quarter against {_money(v1)} a year earlier."),
               ("balance", "How did {cp} cash and cash equivalents change between the end of {q1} and the end of {q2}?", "cash",
                lambda v1, v2: f"From ${v1:,.1f} million to ${v2:,.1f} million."),
               ("turnover", "Did {cp} voluntary staff turnover rise or fall between {q1} and {q2}?", "turnover",
                lambda v1, v2: f"It {'rose' if v2 > v1 else 'fell' if v2 < v1 else 'stayed'} from {v1}% to {v2}%.")]
    for kind, tmpl, key, ans_f in specs_b:
        c = rng.choice(comps)
        qn = rng.randint(1, 4)
        d1, d2 = mr.doc_id(c, 2024, qn), mr.doc_id(c, 2025, qn)
        f1, f2 = _fact(reports, d1, kind), _fact(reports, d2, kind)
        out.append(("multi-hop", tmpl.format(cp=poss(c.name), q1=f"Q{qn} 2024", q2=f"Q{qn} 2025"),
                    ans_f(f1[key], f2[key]), [(d1, f1["span"]), (d2, f2["span"])]))
    # C: guidance given in one report against the revenue reported in the next
    for c in rng.sample(comps, 4):
        i = rng.randint(0, len(mr.QUARTERS) - 2)
        (y1, q1), (y2, q2) = mr.QUARTERS[i], mr.QUARTERS[i + 1]
        d1, d2 = mr.doc_id(c, y1, q1), mr.doc_id(c, y2, q2)
        g, r = _fact(reports, d1, "guidance"), _fact(reports, d2, "revenue")
        inside = g["lo"] <= r["rev"] <= g["hi"]
        where = "within" if inside else "above" if r["rev"] > g["hi"] else "below"
        ans = (f"{'Yes' if inside else 'No'}: it guided to ${g['lo']:,.0f}–${g['hi']:,.0f} million and reported "
               f"${r['rev']:,.1f} million, {where} the range.")
        out.append(("multi-hop", f"Did {poss(c.name)} revenue in Q{q2} {y2} land within the range it had guided to in its Q{q1} {y1} report?",
                    ans, [(d1, g["span"]), (d2, r["span"])]))
    return out


# --------------------------------------------------------------------------- assembly
def strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5:].lstrip("\n")
    return text


def check_spans(queries: list[tuple[str, str, str, list[tuple[str, str]]]]) -> list[str]:
    problems = []
    cache: dict[str, str] = {}
    for kind, question, _, golden in queries:
        if (kind == "unanswerable") != (not golden):
            problems.append(f"{question!r}: kind {kind} with {len(golden)} golden spans")
        if kind == "multi-hop" and len({d for d, _ in golden}) < 2:
            problems.append(f"{question!r}: multi-hop needs two documents")
        for did, span in golden:
            path = CORPUS / did
            if not path.exists():
                problems.append(f"{question!r}: no document {did}")
                continue
            text = cache.setdefault(did, strip_front_matter(path.read_text(encoding="utf-8")))
            n = text.count(span)
            if n != 1 or len(span) > 300:
                problems.append(f"{question!r}: span found {n} times (len {len(span)}) in {did}: {span!r}")
    return problems


def build() -> list[dict]:
    reports = mr.generate()
    queries = HANDWRITTEN + report_queries(reports)
    problems = check_spans(queries)
    if problems:
        raise SystemExit("golden span problems:\n" + "\n".join(problems))
    rows: list[dict] = []
    for kind in KIND_ORDER:
        of_kind = [q for q in queries if q[0] == kind]
        order = list(range(len(of_kind)))
        random.Random(f"{SEED}-{kind}").shuffle(order)
        n_dev = round(0.4 * len(of_kind))
        dev = set(order[:n_dev])
        for i, (_, question, answer, golden) in enumerate(of_kind):
            rows.append({"id": "", "question": question, "kind": kind, "split": "dev" if i in dev else "test",
                         "lang": "en", "answer": answer,
                         "golden": [{"doc_id": d, "span": s} for d, s in golden]})
    for n, row in enumerate(rows, 1):
        row["id"] = f"en-{n:03d}"
    return rows


def main(argv: list[str] | None = None) -> int:
    return write_or_check(__doc__.splitlines()[0], lambda: {OUT: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build())}, argv)


if __name__ == "__main__":
    sys.exit(main())
