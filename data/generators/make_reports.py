"""Generate the fictional quarterly reports in data/corpus/reports/.

What it is: a seeded, deterministic generator (standard library only) that writes one
Markdown report per company and quarter, 2024-Q1 to 2025-Q4, for eight invented companies.
The body names the company and the quarter only in the title line and the opening
sentence; every later paragraph says "the Company", "the quarter", "the previous quarter".
Paragraphs are drawn from shared template pools, so the same sentence shapes (and often the
same sentences) recur across reports, and a paragraph only makes sense with its document's
title: the failure mode that contextual retrieval fixes (Anthropic, "Introducing Contextual
Retrieval", 2024).

What it is not: financial modelling. The numbers are a random walk that is consistent within
a company (this quarter's "previous quarter" figure is last quarter's figure, segment revenue
sums to total revenue, free cash flow = operating cash flow - capital expenditure), nothing
more. All companies, products, people and places are fictional.

Limits: changing a template or the seed changes the reports and therefore the golden spans;
re-run make_golden_en.py afterwards (it re-checks every span).

It also writes the figures the reports state as CSV tables, `data/reports/reports.csv`
(one row per company and quarter) and `data/reports/segments.csv` (one row per segment),
the database behind the agent's `reports_sql` tool: questions that need aggregation
("which company grew revenue fastest in 2025?") go to SQL, wording questions to search.

Usage:
    python data/generators/make_reports.py            # (re)write the reports and figures
    python data/generators/make_reports.py --check    # exit 1 if files differ from output
"""
from __future__ import annotations

import csv
import io
import random
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from _output import write_or_check  # noqa: E402  (this folder is on sys.path)

SEED = 20250101
OUT_DIR = Path(__file__).resolve().parents[1] / "corpus" / "reports"
FIGURES_DIR = Path(__file__).resolve().parents[1] / "reports"  # outside the corpus: not indexed
QUARTERS = [(2024, 1), (2024, 2), (2024, 3), (2024, 4), (2025, 1), (2025, 2), (2025, 3), (2025, 4)]
HIDDEN = [(2023, 1), (2023, 2), (2023, 3), (2023, 4)]  # simulated for year-over-year only
ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}
QUARTER_END = {1: "March 31", 2: "June 30", 3: "September 30", 4: "December 31"}
TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Segment:
    name: str
    share: float        # typical share of company revenue
    margin: float       # typical operating margin, percent
    products: str       # noun phrase used in driver sentences


@dataclass(frozen=True)
class Company:
    name: str
    slug: str
    revenue: float            # revenue of the first simulated quarter, $ million
    growth: tuple[int, ...]   # pool of quarter-on-quarter growth rates, percent
    gross_margin: float
    headcount: int
    geo: tuple[int, int, int]  # North America, Europe, rest of world, percent
    recurring: int             # recurring revenue share, percent
    kpi_start: float
    kpi_step: tuple[float, float]
    kpi_sentence: str          # {v} this quarter, {p} previous quarter
    kpi_question: str          # {c} company, {q} quarter label
    kpi_answer: str
    payout: str                # "dividend", "buyback" or "none"
    rd_share: float            # typical share of research and development in operating expenses
    segments: tuple[Segment, ...]
    events: tuple[str, ...]    # eight event fragments, one per published quarter
    event_questions: dict[int, tuple[str, str]] = field(default_factory=dict)


COMPANIES: tuple[Company, ...] = (
    Company(
        name="Northwind Robotics", slug="northwind", revenue=296.0,
        growth=(-2, 0, 1, 2, 3, 3, 4, 5, 6), gross_margin=38.5, headcount=2140,
        geo=(48, 34, 18), recurring=22, kpi_start=15200, kpi_step=(380, 960),
        kpi_sentence="The installed base reached {v:,.0f} robots at the end of the quarter, up from {p:,.0f} a quarter earlier.",
        kpi_question="How many robots were in {c}'s installed base at the end of {q}?",
        kpi_answer="The installed base was {v:,.0f} robots.",
        payout="none", rd_share=0.34,
        segments=(
            Segment("Warehouse Automation", 0.56, 15.0, "picking arms and sortation lines"),
            Segment("Service Robots", 0.27, 6.0, "cleaning and delivery robots"),
            Segment("Software and Support", 0.17, 31.0, "fleet software licences and maintenance contracts"),
        ),
        events=(
            "began volume shipments of the Tern P4 picking arm, which handles parcels of up to 25 kilograms",
            "opened a refurbishment centre in Tilburg that returns used robots to service within ten working days",
            "signed an agreement to automate eleven distribution centres for the grocery chain Pallard Fresh",
            "released version 6 of its Fleetwise orchestration software, which schedules mixed fleets of robots from several vendors",
            "acquired Gantry Optics, a maker of depth cameras for robot grippers, for $38.0 million in cash",
            "launched the Skimmer C2, a floor-cleaning robot for airports and railway stations",
            "moved final assembly of mobile robots from two contract manufacturers into its own plant in Brno",
            "introduced a robots-as-a-service plan under which customers pay a monthly fee per robot instead of buying the hardware",
        ),
        event_questions={
            0: ("In which quarter did Northwind Robotics begin volume shipments of the Tern P4 picking arm?",
                "Northwind Robotics began volume shipments of the Tern P4 in Q1 2024."),
            4: ("How much did Northwind Robotics pay to acquire Gantry Optics?",
                "It paid $38.0 million in cash for Gantry Optics (reported for Q1 2025)."),
        },
    ),
    Company(
        name="Halvorsen Maritime", slug="halvorsen", revenue=512.0,
        growth=(-4, -1, 0, 1, 2, 3, 4, 5), gross_margin=24.0, headcount=5310,
        geo=(21, 52, 27), recurring=18, kpi_start=2140.0, kpi_step=(-60.0, 140.0),
        kpi_sentence="The order backlog stood at ${v:,.1f} million at the end of the quarter, compared with ${p:,.1f} million a quarter earlier.",
        kpi_question="What was {c}'s order backlog at the end of {q}?",
        kpi_answer="The order backlog was ${v:,.1f} million.",
        payout="dividend", rd_share=0.2,
        segments=(
            Segment("Harbor Cranes", 0.51, 9.0, "ship-to-shore cranes and straddle carriers"),
            Segment("Vessel Retrofits", 0.34, 7.5, "exhaust scrubbers and hybrid propulsion kits"),
            Segment("Port Software", 0.15, 22.0, "berth planning and yard management systems"),
        ),
        events=(
            "delivered the first of six electric ship-to-shore cranes ordered by the port authority of Vassby",
            "won a contract to retrofit hybrid propulsion on fourteen ferries operated by Skerry Line",
            "opened a crane assembly yard in Gdynia that doubles its capacity for large cranes",
            "launched BerthPilot 4, a berth planning system that forecasts vessel arrivals from live position data",
            "completed the sale of its tugboat chartering business to Fjordvik Holding for $61.5 million",
            "received type approval for the Halyard S9 exhaust scrubber, which cuts sulphur emissions below the 0.1% limit",
            "agreed with the dockworkers' union on a three-year wage settlement covering its Nordic yards",
            "started a remote operations centre in Aalesund from which cranes at three customer terminals are operated",
        ),
        event_questions={
            4: ("Who bought Halvorsen Maritime's tugboat chartering business, and for how much?",
                "Fjordvik Holding bought it for $61.5 million."),
            5: ("Which Halvorsen Maritime scrubber received type approval?",
                "The Halyard S9 exhaust scrubber received type approval."),
        },
    ),
    Company(
        name="Brightwater Foods", slug="brightwater", revenue=884.0,
        growth=(-3, -1, 0, 1, 1, 2, 2, 3, 4), gross_margin=31.0, headcount=9650,
        geo=(63, 29, 8), recurring=0, kpi_start=41800, kpi_step=(-300, 1400),
        kpi_sentence="Products were sold through {v:,.0f} retail distribution points at the end of the quarter, against {p:,.0f} a quarter earlier.",
        kpi_question="Through how many retail distribution points did {c} sell its products at the end of {q}?",
        kpi_answer="Through {v:,.0f} retail distribution points.",
        payout="dividend", rd_share=0.07,
        segments=(
            Segment("Packaged Meals", 0.52, 12.5, "ready meals, soups and pasta sauces"),
            Segment("Frozen Desserts", 0.28, 10.0, "ice cream and frozen yoghurt"),
            Segment("Food Service", 0.20, 6.5, "bulk ingredients for restaurants and canteens"),
        ),
        events=(
            "recalled one production batch of mushroom soup after a labelling error and destroyed the affected stock",
            "launched the Little Harvest range of children's meals in three flavours",
            "closed its oldest dessert plant in Wexmoor and moved production to a new line in Carrow",
            "signed a five-year supply agreement with the canteen operator Meridel Catering",
            "replaced plastic trays with fibre-based trays across the ready-meal range",
            "acquired the artisan gelato maker Dolce Ferro for $44.0 million",
            "opened a product development kitchen in Lisbon focused on plant-based recipes",
            "renegotiated its dairy purchasing contracts, fixing the price of about half of next year's cream supply",
        ),
        event_questions={
            1: ("Which children's meal range did Brightwater Foods launch, and when?",
                "Brightwater Foods launched the Little Harvest range in Q2 2024."),
            5: ("What did Brightwater Foods pay for Dolce Ferro?",
                "It acquired Dolce Ferro for $44.0 million."),
        },
    ),
    Company(
        name="Cedarline Health", slug="cedarline", revenue=238.0,
        growth=(-1, 1, 2, 3, 4, 5, 6, 7), gross_margin=57.0, headcount=1480,
        geo=(71, 22, 7), recurring=46, kpi_start=3120, kpi_step=(40, 190),
        kpi_sentence="{v:,.0f} clinics used the Company's software platform at the end of the quarter, up from {p:,.0f} a quarter earlier.",
        kpi_question="How many clinics used {c}'s software platform at the end of {q}?",
        kpi_answer="{v:,.0f} clinics used the platform.",
        payout="none", rd_share=0.42,
        segments=(
            Segment("Diagnostics", 0.48, 18.0, "assay kits and benchtop analysers"),
            Segment("Clinic Software", 0.33, 24.0, "scheduling and electronic record software for clinics"),
            Segment("Home Monitoring", 0.19, -4.0, "connected blood pressure and glucose monitors"),
        ),
        events=(
            "received regulatory clearance for the Vireo 12 analyser, which runs twelve blood tests from one sample",
            "moved its largest clinic software customers to a new hosting region in Frankfurt",
            "began a reimbursement pilot with the insurer Castellan Mutual for remote monitoring of heart patients",
            "launched Cedar Notes, a feature that drafts visit summaries for clinicians to review and sign",
            "suspended sales of one glucose monitor model while a battery fault was investigated",
            "opened a reagent plant in Limerick that supplies assay kits to European customers",
            "signed a ten-year agreement to supply analysers and reagents to the Arrowmere hospital group",
            "completed a security certification audit of its clinic software with no major findings",
        ),
        event_questions={
            0: ("How many blood tests can Cedarline Health's Vireo 12 analyser run from one sample?",
                "The Vireo 12 runs twelve blood tests from one sample."),
            6: ("Which hospital group signed a ten-year analyser and reagent agreement with Cedarline Health?",
                "The Arrowmere hospital group."),
        },
    ),
    Company(
        name="Solvara Energy", slug="solvara", revenue=402.0,
        growth=(-6, -3, 0, 2, 4, 6, 8, 9), gross_margin=22.0, headcount=3870,
        geo=(58, 35, 7), recurring=12, kpi_start=1820.0, kpi_step=(90.0, 310.0),
        kpi_sentence="Cumulative battery storage deployed reached {v:,.0f} megawatt-hours at the end of the quarter, compared with {p:,.0f} megawatt-hours a quarter earlier.",
        kpi_question="How much battery storage had {c} deployed in total by the end of {q}?",
        kpi_answer="{v:,.0f} megawatt-hours of storage had been deployed.",
        payout="none", rd_share=0.18,
        segments=(
            Segment("Residential Solar", 0.46, 5.0, "rooftop panels and inverters for homeowners"),
            Segment("Battery Storage", 0.38, 8.0, "home batteries and containerised storage systems"),
            Segment("Grid Services", 0.16, 19.0, "demand response and frequency regulation contracts"),
        ),
        events=(
            "commissioned a 40-megawatt-hour storage site at Marrow Flats for a regional utility",
            "cut the price of the Helia H7 home battery by 8% to respond to cheaper imports",
            "won a frequency regulation tender from the grid operator Norvane for two years of service",
            "opened an installer training academy in Valencia",
            "began selling a bundled solar, battery and heat pump package called HomeCircuit Complete",
            "refinanced a $150.0 million term loan, extending its maturity by three years",
            "started production of storage containers at a leased factory in Tucson",
            "enrolled its 100,000th home battery in its virtual power plant programme",
        ),
        event_questions={
            1: ("By how much did Solvara Energy cut the price of the Helia H7 home battery?",
                "It cut the price by 8%."),
            4: ("What is HomeCircuit Complete, and which company sells it?",
                "A bundled solar, battery and heat pump package that Solvara Energy began selling."),
        },
    ),
    Company(
        name="Quillmark Publishing", slug="quillmark", revenue=148.0,
        growth=(-5, -2, 0, 1, 2, 3, 5), gross_margin=61.0, headcount=920,
        geo=(55, 38, 7), recurring=41, kpi_start=612000, kpi_step=(-4000, 21000),
        kpi_sentence="Paying digital subscribers numbered {v:,.0f} at the end of the quarter, compared with {p:,.0f} a quarter earlier.",
        kpi_question="How many paying digital subscribers did {c} have at the end of {q}?",
        kpi_answer="{v:,.0f} paying digital subscribers.",
        payout="dividend", rd_share=0.15,
        segments=(
            Segment("Textbooks", 0.47, 16.0, "printed and digital textbooks for schools and universities"),
            Segment("Digital Subscriptions", 0.38, 21.0, "reading apps and online course libraries"),
            Segment("Rights and Licensing", 0.15, 44.0, "translation, film and audio rights"),
        ),
        events=(
            "published the eleventh edition of its best-selling chemistry textbook, Foundations of Matter",
            "launched Quill Tutor, an adaptive practice tool bundled with its mathematics titles",
            "sold the film rights to the novel The Salt Orchard to the studio Lanternfield Pictures",
            "ended the printing of its reference atlas series after falling sales",
            "signed a licensing agreement with the Ministry of Education of a Baltic state for its primary-school reading series",
            "moved its warehouse operations to a third-party logistics provider, Fairlight Distribution",
            "raised the price of its annual digital library subscription from $89 to $99",
            "acquired the audiobook producer Hearthsound Studios for $12.5 million",
        ),
        event_questions={
            2: ("Which studio bought the film rights to The Salt Orchard?",
                "Lanternfield Pictures bought the film rights."),
            6: ("To what price did Quillmark Publishing raise its annual digital library subscription?",
                "From $89 to $99 a year."),
        },
    ),
    Company(
        name="Tessellate Semiconductors", slug="tessellate", revenue=688.0,
        growth=(-7, -4, -1, 2, 4, 6, 8, 11), gross_margin=52.0, headcount=6120,
        geo=(24, 19, 57), recurring=6, kpi_start=410, kpi_step=(15, 60),
        kpi_sentence="The Company recorded {d:,.0f} new design wins during the quarter, bringing the cumulative count since the start of the programme to {v:,.0f}.",
        kpi_question="How many new design wins did {c} record in {q}?",
        kpi_answer="{d:,.0f} new design wins, {v:,.0f} cumulative.",
        payout="buyback", rd_share=0.52,
        segments=(
            Segment("Sensor Chips", 0.44, 24.0, "image and motion sensors"),
            Segment("Power Management", 0.41, 27.0, "voltage regulators and battery charger chips"),
            Segment("Design Services", 0.15, 11.0, "custom chip design projects"),
        ),
        events=(
            "taped out the TS-880 image sensor on a 28-nanometre process",
            "qualified a second foundry partner, Kaimon Semiconductor, for its power management chips",
            "began sampling the PX-21 battery charger chip to smartphone makers",
            "opened a design centre in Hsinchu with room for 150 engineers",
            "took a $22.0 million write-down on inventory of older motion sensors",
            "announced an automotive-grade version of its voltage regulators, the VR-5A",
            "signed a long-term wafer supply agreement covering the next four years",
            "won its largest design services project to date, a custom chip for an industrial drone maker",
        ),
        event_questions={
            0: ("On which process node did Tessellate Semiconductors tape out the TS-880 image sensor?",
                "On a 28-nanometre process."),
            4: ("How large was Tessellate Semiconductors' inventory write-down on older motion sensors?",
                "It took a $22.0 million write-down."),
        },
    ),
    Company(
        name="Orchard Lane Retail", slug="orchardlane", revenue=1236.0,
        growth=(-8, -2, 0, 1, 2, 3, 4, 12), gross_margin=34.0, headcount=21400,
        geo=(88, 12, 0), recurring=0, kpi_start=5.40, kpi_step=(-0.02, 0.11),
        kpi_sentence="Active loyalty members reached {v:,.2f} million at the end of the quarter, compared with {p:,.2f} million a quarter earlier.",
        kpi_question="How many active loyalty members did {c} have at the end of {q}?",
        kpi_answer="{v:,.2f} million active loyalty members.",
        payout="dividend", rd_share=0.04,
        segments=(
            Segment("Stores", 0.61, 6.0, "home and garden goods sold in its stores"),
            Segment("Online", 0.29, 4.0, "orders placed on its website and app"),
            Segment("Private Label", 0.10, 14.0, "own-brand furniture and textiles sold to other retailers"),
        ),
        events=(
            "opened nine stores in the new compact format, each with about 1,200 square metres of selling space",
            "introduced same-day delivery in four metropolitan areas through the courier Swiftgull",
            "closed fourteen underperforming stores and transferred most of their staff to nearby locations",
            "launched the Larchwood private-label furniture line in a partner retailer's stores",
            "replaced the points scheme of its loyalty programme with instant discounts at the till",
            "completed the automation of its central distribution centre in Dunmore",
            "began a click-and-collect partnership with the petrol station chain Redkite",
            "renegotiated the leases of 38 stores, reducing annual rent by about $6.0 million",
        ),
        event_questions={
            1: ("Which courier does Orchard Lane Retail use for same-day delivery?",
                "The courier Swiftgull."),
            7: ("How many store leases did Orchard Lane Retail renegotiate, and what did it save?",
                "38 store leases, reducing annual rent by about $6.0 million."),
        },
    ),
)

# --------------------------------------------------------------------------- text pools
OVERVIEW = {
    "up": (
        "Management described the quarter as one of steady progress. Demand held up across most markets, the order book remained healthy and the Company continued to invest in the products and systems it needs for the next stage of growth, while keeping a close watch on costs.",
        "The quarter was a good one overall. Sales volumes improved, pricing was stable and the Company made progress on the operational priorities it set out at the beginning of the year. Management remains cautious about the wider economy and is not changing its approach to spending.",
        "Results for the quarter were in line with management's plan. The Company benefited from firm demand in its larger businesses and from the cost measures introduced earlier, and it continued to fund development work that will not contribute to revenue for some time.",
    ),
    "flat": (
        "The quarter was broadly stable. Demand neither improved nor weakened materially, and the Company used the period to complete several internal projects, tighten working capital and prepare product launches planned for later in the year.",
        "Management described the quarter as a period of consolidation. Sales were close to the level of the previous quarter, costs were kept under control, and the Company continued to invest selectively in its most promising products.",
    ),
    "down": (
        "The quarter was more difficult than management had expected. Several customers delayed orders, pricing came under pressure in parts of the business and the Company took steps to protect margins, including a hiring freeze in administrative functions.",
        "Results for the quarter were weaker than the Company had planned. Softer demand in some markets and the timing of large orders weighed on sales, and management responded by deferring discretionary spending while protecting investment in core products.",
    ),
}

HIGHLIGHT_EXTRA = (
    "Continued progress on the cost programme announced last year.",
    "No change to the Company's capital allocation priorities.",
    "Customer retention remained above the Company's internal target.",
    "Working capital improved as inventory levels came down.",
    "Investment in product development continued at the planned level.",
    "Safety performance at operating sites improved on the previous quarter.",
)

EVENT_LEAD = ("During the quarter, the Company", "In the course of the quarter, the Company", "This quarter the Company")
EVENT_FOLLOW = (
    "Management expects the initiative to contribute gradually over the coming quarters rather than all at once.",
    "The financial effect in the quarter was small, and the Company will report on progress in future updates.",
    "The costs associated with this step are included in operating expenses for the quarter.",
    "Management regards this as an important step in the Company's medium-term plan.",
    "The Company does not expect this development to change its outlook for the coming quarter.",
)

MARKET = (
    "Demand conditions were broadly similar to those of the previous quarter. Customers continued to approve projects, but purchasing committees took longer to sign off on larger orders, and several customers asked to split deliveries across two or more quarters. Management does not regard this as a change in underlying demand, but it does make the timing of revenue harder to predict.",
    "Input costs were mixed. Prices for freight and packaging eased, while wage inflation and higher prices for some purchased components continued to weigh on costs. The Company renegotiated a number of supply contracts during the quarter and expects the full benefit of the new terms to appear over the next two quarters.",
    "Interest rates remained a factor in customers' decisions. Customers that finance purchases with debt were more cautious, while customers with strong balance sheets continued to spend. The Company offered extended payment terms to a small number of strategic customers, which is reflected in receivables.",
    "Competition remained intense in the Company's core markets. Several competitors cut list prices during the quarter. The Company chose to defend its pricing and accepted some loss of volume in lower-margin business, a decision management believes will support profitability over time.",
    "Currency movements had a modest effect on results. A weaker euro reduced the value of European sales when translated into dollars, partly offset by lower costs at European facilities. The Company hedges part of its expected currency exposure for up to twelve months.",
    "Supply chains operated more smoothly than a year earlier. Lead times for most purchased parts returned to normal levels, and the Company reduced safety stock for several items. Some specialised parts still require long lead times, and the Company continues to hold extra inventory of those items.",
    "The regulatory environment was stable. The Company is following proposals in several jurisdictions that would change reporting requirements for product safety and environmental data, and it has begun preparing the systems needed to comply with them.",
    "Customer sentiment improved slightly compared with the previous quarter. Surveys of the Company's largest customers point to steady budgets for the coming year, although many customers are prioritising projects with a short payback period.",
    "Labour markets remained tight for skilled technical staff. The Company saw lower staff turnover than a year earlier but continued to pay premiums to hire engineers and field technicians in some regions.",
    "Seasonal patterns were in line with previous years. Order intake was concentrated in the last weeks of the quarter, as is usual for the Company, and shipments followed the same pattern.",
    "Energy prices were lower than a year earlier, which reduced operating costs at the Company's larger sites. Management does not assume that prices will stay at these levels and continues to buy part of its energy needs in advance.",
)

REV_UP = (
    "Revenue grew {g}% over the previous quarter to ${rev} million.",
    "Revenue rose {g}% compared with the previous quarter, reaching ${rev} million.",
    "The Company's revenue grew by {g}% over the previous quarter, to ${rev} million.",
)
REV_DOWN = (
    "Revenue fell {g}% from the previous quarter to ${rev} million.",
    "Revenue declined by {g}% compared with the previous quarter, to ${rev} million.",
    "The Company's revenue decreased {g}% from the previous quarter, to ${rev} million.",
)
REV_FLAT = (
    "Revenue was unchanged from the previous quarter at ${rev} million.",
    "Revenue of ${rev} million was flat compared with the previous quarter.",
)
REV_PREV = (
    "In the previous quarter, revenue had been ${prev} million.",
    "Revenue in the previous quarter was ${prev} million.",
)
YOY = (
    "Compared with the same quarter a year earlier, revenue was {yoy_dir} {yoy}%.",
    "Year over year, revenue was {yoy_dir} {yoy}%.",
    "Against the same quarter of the prior year, revenue was {yoy_dir} {yoy}%.",
)
DRIVER = {
    "up": (
        "Most of the increase came from higher volumes; average prices were broadly stable.",
        "Higher volumes and a better product mix both contributed to the increase.",
        "Price increases introduced earlier in the year accounted for roughly a third of the growth, and higher volumes for the rest.",
    ),
    "flat": (
        "Higher prices offset slightly lower volumes.",
        "Volumes and prices were both close to the levels of the previous quarter.",
    ),
    "down": (
        "The decline reflected lower volumes, in part because customers postponed orders.",
        "Lower volumes and a less favourable product mix both contributed to the decline.",
        "Price reductions in competitive markets accounted for most of the decline.",
    ),
}
GEO = (
    "North America accounted for {na}% of revenue, Europe for {eu}% and the rest of the world for {row}%.",
    "By region, {na}% of revenue came from North America, {eu}% from Europe and {row}% from the rest of the world.",
)
GEO_NO_ROW = (
    "North America accounted for {na}% of revenue and Europe for {eu}%.",
    "By region, {na}% of revenue came from North America and {eu}% from Europe.",
)
RECURRING = (
    "Recurring revenue from service contracts and subscriptions made up {rec}% of the total.",
    "Recurring revenue, mainly service contracts and subscriptions, represented {rec}% of revenue.",
)

SEG_INTRO = (
    "The Company reports its results in three segments.",
    "Results by segment were as follows.",
    "The three reporting segments developed as follows.",
)
SEG_LINE = (
    "The {seg} segment reported revenue of ${srev} million, {chg} the previous quarter, and an operating margin of {sm}%.",
    "{seg} contributed revenue of ${srev} million, {chg} the previous quarter; its operating margin was {sm}%.",
    "Revenue in {seg} was ${srev} million, {chg} the previous quarter, at an operating margin of {sm}%.",
)
SEG_DRIVER = {
    "up": (
        "Demand for {products} was firm.",
        "Sales of {products} increased, helped by several larger orders.",
        "Growth came from {products}.",
    ),
    "flat": (
        "Sales of {products} were steady.",
        "Demand for {products} was unchanged.",
    ),
    "down": (
        "Sales of {products} were lower as some customers delayed purchases.",
        "Demand for {products} softened.",
        "The segment was affected by weaker demand for {products}.",
    ),
}

OPEX = (
    "Operating expenses were ${opex} million, equal to {opex_pct}% of revenue.",
    "Total operating expenses came to ${opex} million, or {opex_pct}% of revenue.",
)
OPEX_SPLIT = (
    "Research and development spending was ${rd} million, sales and marketing ${sm_} million, and general and administrative expenses ${ga} million.",
    "Of the total, research and development accounted for ${rd} million, sales and marketing for ${sm_} million and general and administrative costs for ${ga} million.",
)
OPINC = (
    "Operating income was ${oi} million, an operating margin of {om}%.",
    "The Company reported operating income of ${oi} million, giving an operating margin of {om}%.",
)
OPLOSS = (
    "The Company reported an operating loss of ${oi} million, an operating margin of minus {om}%.",
)
HEAD_UP = (
    "The Company had {hc:,} employees at the end of the quarter, {dh:,} more than at the end of the previous quarter.",
    "Headcount at the end of the quarter was {hc:,}, a net increase of {dh:,} during the quarter.",
)
HEAD_DOWN = (
    "The Company had {hc:,} employees at the end of the quarter, {dh:,} fewer than at the end of the previous quarter.",
    "Headcount at the end of the quarter was {hc:,}, a net reduction of {dh:,} during the quarter.",
)
COST_NOTE = (
    "Management continues to hold the growth of administrative costs below the growth of revenue.",
    "Spending on external consultants was reduced, and travel costs were kept close to the level of the previous quarter.",
    "The Company continued to invest in information systems, which added to general and administrative expenses.",
    "Wage increases that took effect at the start of the quarter added to personnel costs.",
    "Marketing spending was concentrated on trade fairs and on campaigns for recently launched products.",
)

CASH = (
    "Cash from operations was ${ocf} million and capital expenditure was ${capex} million, resulting in free cash flow of ${fcf} million.",
    "Operating cash flow of ${ocf} million, less capital expenditure of ${capex} million, gave free cash flow of ${fcf} million.",
    "The Company generated free cash flow of ${fcf} million, with operating cash flow of ${ocf} million and capital expenditure of ${capex} million.",
)
CASH_NEG = (
    "Cash from operations was ${ocf} million and capital expenditure was ${capex} million, resulting in negative free cash flow of ${fcf} million.",
    "Operating cash flow of ${ocf} million did not cover capital expenditure of ${capex} million, so free cash flow was negative at ${fcf} million.",
)
BALANCE = (
    "Cash and cash equivalents stood at ${cash} million at the end of the quarter, and total debt was ${debt} million.",
    "The Company ended the quarter with cash and cash equivalents of ${cash} million and total debt of ${debt} million.",
)
DSO = (
    "Days sales outstanding were {dso}, compared with {dso_prev} in the previous quarter.",
    "Days sales outstanding stood at {dso} days, against {dso_prev} days a quarter earlier.",
)
PAYOUT = {
    "dividend": (
        "The board declared a quarterly dividend of ${div} per share.",
        "A quarterly dividend of ${div} per share was declared.",
    ),
    "buyback": (
        "The Company repurchased its own shares for ${bb} million during the quarter.",
        "Share repurchases during the quarter amounted to ${bb} million.",
    ),
    "none": (
        "The Company does not pay a dividend and retains its cash to fund growth.",
        "No dividend was declared; the Company continues to reinvest its cash in the business.",
    ),
}
CASH_NOTE = (
    "Inventory was reduced during the quarter, which released working capital.",
    "Receivables rose with the higher share of sales recorded in the last month of the quarter.",
    "Capital expenditure went mainly to production equipment and to information systems.",
    "Management expects capital expenditure to stay at a similar level for the rest of the year.",
)

GUIDE = (
    "For the next quarter, the Company expects revenue of between ${lo} million and ${hi} million.",
    "The Company expects revenue for the next quarter to be in the range of ${lo} million to ${hi} million.",
    "Management's outlook for the next quarter is revenue of ${lo} million to ${hi} million.",
)
GUIDE_GM = (
    "Gross margin is expected to be around {ggm}%.",
    "Management expects gross margin of approximately {ggm}%.",
)
OUTLOOK_NOTE = (
    "The outlook assumes no material change in exchange rates and no further deterioration in the general economy.",
    "The outlook does not include the effect of any acquisitions that have not yet closed.",
    "Management will update the outlook if order intake differs materially from its expectations.",
    "The range reflects uncertainty about the timing of several large customer orders.",
)

RISKS = (
    "A slowdown in the general economy could lead customers to postpone purchases, reducing revenue and making it harder to absorb fixed costs.",
    "The Company depends on a limited number of suppliers for some components. A disruption at one of these suppliers could delay deliveries for several weeks.",
    "Changes in exchange rates affect the reported value of sales and costs outside the United States. Hedging reduces but does not remove this exposure.",
    "The Company's information systems could be affected by cyber attacks. A successful attack could interrupt operations and expose customer data.",
    "New regulation in areas such as product safety, data protection or environmental reporting could increase compliance costs.",
    "The loss of one or more large customers would have a significant effect on revenue, because a small number of customers account for a large share of sales.",
    "Competitors may introduce products at lower prices, forcing the Company to reduce prices or accept lower volumes.",
    "The Company's growth plan depends on hiring and keeping skilled staff, who are in short supply in several regions.",
    "Acquisitions carry the risk that expected benefits are not achieved or that integration takes longer and costs more than planned.",
    "Higher interest rates increase the cost of the Company's variable-rate debt and may reduce customers' willingness to invest.",
)
RISK_INTRO = (
    "The principal risks facing the Company are described below.",
    "The main risks to the Company's results include the following.",
    "Management considers the following risks the most significant.",
)


OVERVIEW_2 = (
    "The sections below describe revenue, segment results, costs and cash flow for the quarter, followed by management's outlook for the next quarter and a summary of the principal risks. All amounts are in US dollars and unaudited.",
    "This report covers the three months of the quarter. Figures are unaudited and in US dollars; comparisons are with the previous quarter unless stated otherwise.",
    "Unless stated otherwise, all figures in this report are unaudited, in US dollars, and compared with the previous quarter.",
)

INTAKE = (
    "Order intake was ${intake} million, giving a book-to-bill ratio of {btb:.2f}.",
    "New orders totalled ${intake} million, a book-to-bill ratio of {btb:.2f}.",
    "The Company booked orders worth ${intake} million during the quarter, for a book-to-bill ratio of {btb:.2f}.",
)
TOP10 = (
    "The ten largest customers accounted for {top10}% of revenue.",
    "The Company's ten largest customers represented {top10}% of revenue in the quarter.",
)
NEW_CUST = (
    "The Company added {new_cust} new customers during the quarter.",
    "{new_cust} new customers placed their first order during the quarter.",
)
RETAIL_TRAFFIC = (
    "Comparable-store sales were {cs_dir} {cs}% compared with the previous quarter.",
    "Sales in stores open for more than a year were {cs_dir} {cs}% on the previous quarter.",
)
RETAIL_BASKET = (
    "The average transaction value was ${basket}, and {top10}% of online orders were collected in a store.",
    "Customers spent an average of ${basket} per transaction, and {top10}% of online orders were picked up in a store.",
)
CUST_NOTE = (
    "Customer concentration was broadly unchanged.",
    "Pricing on new contracts was in line with the previous quarter.",
    "Cancellations remained low.",
    "The pipeline of opportunities at the end of the quarter was larger than a quarter earlier.",
    "Complaints per thousand orders fell slightly.",
)

SEG_NOTE = (
    "Pricing in the segment was stable.",
    "The segment's order book at the end of the quarter was higher than a quarter earlier.",
    "Margins benefited from lower input costs.",
    "Margins were held back by spending on new products.",
    "Several larger projects were completed during the quarter.",
    "The segment continued to gain share in its main markets.",
    "Warranty costs in the segment were lower than a quarter earlier.",
)

TURNOVER = (
    "Voluntary staff turnover over the last twelve months was {turnover}%.",
    "Annualised voluntary turnover stood at {turnover}%.",
)
TRAINING = (
    "Employees completed an average of {training} hours of training during the quarter.",
    "On average, each employee received {training} hours of training in the quarter.",
)
ENGAGE = (
    "In the quarterly employee survey, {engagement}% of respondents said they would recommend the Company as a place to work.",
    "The employee engagement score in the quarterly survey was {engagement} out of 100.",
)
PEOPLE_NOTE = (
    "The Company continued its programme to bring more women into technical roles.",
    "A new leadership course for first-line managers started during the quarter.",
    "Hiring focused on engineering, field service and data roles.",
    "The Company extended its hybrid working arrangements for office staff.",
)

EMISSIONS = (
    "Scope 1 and 2 greenhouse gas emissions were {emis_txt} compared with the previous quarter.",
    "Direct and energy-related emissions were {emis_txt} on the previous quarter.",
)
LTIR = (
    "The lost-time injury rate was {ltir} per 200,000 hours worked.",
    "The Company recorded a lost-time injury rate of {ltir} per 200,000 hours worked.",
)
RENEWABLE = (
    "Renewable sources supplied {renew}% of the electricity used at the Company's sites.",
    "The share of electricity from renewable sources was {renew}%.",
)
SUST_NOTE = (
    "The Company is on track to publish its annual sustainability report on schedule.",
    "Two further sites switched to renewable electricity contracts.",
    "Waste sent to landfill continued to fall as recycling was extended to more sites.",
)

QUOTE = (
    "\"We are focused on execution,\" the chief executive said. \"Our priorities for the next quarter are to deliver on our order book, keep costs under control and keep investing in the products our customers ask for.\"",
    "\"The quarter showed what the business can do when we stay disciplined,\" the chief executive said. \"We will keep our attention on customers, on cash and on the quality of what we deliver.\"",
    "\"We are not satisfied with every part of the business, but the direction is right,\" the chief executive said. \"The next quarter is about turning our order book into revenue and our revenue into cash.\"",
    "\"Our teams delivered for customers in an uncertain environment,\" the chief executive said. \"We go into the next quarter with a clear plan and a strong balance sheet.\"",
)
FULL_YEAR = (
    "Management reaffirmed its expectations for the full year.",
    "Management's view of the full year is unchanged.",
    "Management now expects full-year results at the upper end of its earlier range.",
    "Management now expects full-year results at the lower end of its earlier range.",
)
FORWARD = (
    "This report contains forward-looking statements, including statements about expected revenue, margins and market conditions. Such statements are based on current expectations and are subject to risks and uncertainties, many of which are outside the Company's control. Actual results may differ materially. The Company undertakes no obligation to update forward-looking statements except as required by law.",
    "Statements in this report that are not historical facts, including the outlook, are forward-looking statements. They reflect management's current expectations and involve risks and uncertainties that could cause actual results to differ materially from those expressed. The Company does not undertake to update these statements except where the law requires it.",
)

PRODUCT = (
    "Development work focused on reducing the cost of the Company's main product lines and on improving reliability in the field. Several design changes that lower material costs were released to production during the quarter, and more are planned.",
    "The Company continued to invest in software that helps customers monitor and maintain the products they have bought. Customers increasingly ask for this capability when they evaluate suppliers, and management sees it as a source of recurring revenue.",
    "Engineering teams completed the testing of a new generation of the Company's core product platform. The new platform uses fewer parts, is easier to service and is expected to be introduced over the next several quarters.",
    "The Company reviewed its product portfolio and decided to phase out a number of low-volume variants. This will simplify manufacturing and free engineering capacity for new products.",
    "Field reliability improved: the number of service calls per installed unit was lower than a quarter earlier, which also reduced warranty costs.",
    "The Company filed several new patent applications during the quarter, mainly covering manufacturing methods and software features.",
)
CAPITAL = (
    "The Company's capital allocation priorities are unchanged: first, investment in the existing business; second, a strong balance sheet; third, targeted acquisitions; and fourth, returns to shareholders.",
    "Management continues to balance investment in growth with the need to keep debt at a comfortable level. The board reviews the capital allocation framework once a year.",
    "The Company intends to keep net debt below two times operating earnings before depreciation and amortisation, and it remained within that limit at the end of the quarter.",
)

DEFINITIONS = (
    "Free cash flow is cash from operations less capital expenditure. Book-to-bill ratio is order intake divided by revenue for the same period. Days sales outstanding are trade receivables at the end of the period divided by revenue for the period, multiplied by the number of days in the period. Operating margin is operating income divided by revenue. Recurring revenue is revenue from service contracts, subscriptions and other agreements that renew automatically.",
    "Operating margin means operating income as a percentage of revenue. Free cash flow means operating cash flow minus capital expenditure. The book-to-bill ratio compares orders received with revenue recognised in the same period; a ratio above one means that the order book grew. Days sales outstanding measure how long, on average, customers take to pay. These measures are not defined by accounting standards and may not be comparable with similarly named measures used by other companies.",
)

GOVERNANCE = (
    "There were no changes to the board of directors during the quarter. The audit committee met twice and reviewed the Company's internal controls over financial reporting, the work of the internal audit function and the plan of the external auditor.",
    "The board appointed a new independent director, who will join the audit committee. The board also approved an updated code of conduct, which all employees will be asked to confirm during the coming months.",
    "The annual review of board effectiveness was completed during the quarter. The review found that the board operated well and recommended more time on the agenda for technology and cyber security matters.",
    "The Company's whistle-blowing line received a small number of reports during the quarter. All were investigated, and none was found to have a material effect on the Company.",
)

# --------------------------------------------------------------------------- simulation
def _rng(*parts: object) -> random.Random:
    return random.Random(zlib.crc32("/".join(map(str, (SEED,) + parts)).encode()))


def _m(x: float) -> str:
    """Money in $ million with one decimal: 1234.5 -> '1,234.5'."""
    return f"{x:,.1f}"


def simulate(c: Company) -> list[dict]:
    """Return 12 quarter states (4 hidden 2023 quarters, then the 8 published ones)."""
    rng = _rng("sim", c.slug)
    states: list[dict] = []
    rev, hc, kpi, dso = c.revenue, c.headcount, c.kpi_start, rng.randint(38, 62)
    cash, debt = round(c.revenue * rng.uniform(0.4, 0.9), 1), round(c.revenue * rng.uniform(0.3, 1.1), 1)
    shares = [s.share for s in c.segments]
    seg_prev = [round(rev * s, 1) for s in shares]
    gm = c.gross_margin
    div = round(rng.uniform(0.12, 0.45), 2)
    for i, (year, q) in enumerate(HIDDEN + QUARTERS):
        g = rng.choice(c.growth)
        prev = rev
        rev = round(prev * (1 + g / 100), 1)
        mix = [max(0.03, s + rng.uniform(-0.02, 0.02)) for s in shares]
        tot = sum(mix)
        seg = [round(rev * m / tot, 1) for m in mix[:-1]]
        seg.append(round(rev - sum(seg), 1))
        seg_chg = [round((a / b - 1) * 100, 1) for a, b in zip(seg, seg_prev)]
        seg_m = [round(s.margin + rng.uniform(-2.5, 2.5), 1) for s in c.segments]
        gm_prev, gm = gm, round(c.gross_margin + rng.uniform(-1.8, 1.8), 1)
        om_target = sum(sg.share * sg.margin for sg in c.segments) + rng.uniform(-1.5, 1.5) + min(g, 3) * 0.4
        opex_total = rev * (gm - om_target) / 100
        rd = round(opex_total * c.rd_share * rng.uniform(0.9, 1.1), 1)
        smk = round(opex_total * (1 - c.rd_share) * rng.uniform(0.55, 0.65), 1)
        ga = round(opex_total - rd - smk, 1)
        opex = round(rd + smk + ga, 1)
        oi = round(rev * gm / 100 - opex, 1)
        dh = rng.randint(-int(c.headcount * 0.012), int(c.headcount * 0.025))
        if dh == 0:
            dh = 7
        hc_prev, hc = hc, hc + dh
        ocf = round(oi * rng.uniform(0.85, 1.35) + rev * rng.uniform(0.0, 0.05), 1)
        capex = round(rev * rng.uniform(0.025, 0.07), 1)
        fcf = round(ocf - capex, 1)
        bb = round(rng.uniform(8, 40), 1) if c.payout == "buyback" else 0.0
        if i in (4, 8) and c.payout == "dividend":
            div = round(div + 0.01 * rng.randint(1, 3), 2)
        payout_cash = bb + (div * rev / 40 if c.payout == "dividend" else 0.0)
        debt_chg = rng.choice((0.0, 0.0, 0.0, -rev * 0.03, rev * 0.04))
        debt = round(max(0.0, debt + debt_chg), 1)
        cash = round(max(rev * 0.08, cash + fcf - payout_cash + debt_chg), 1)
        dso_prev, dso = dso, max(25, dso + rng.randint(-4, 4))
        kpi_prev = kpi
        step = rng.uniform(*c.kpi_step)
        kpi = kpi + step
        center = rev * (1 + sum(c.growth) / len(c.growth) / 100 + rng.uniform(-0.02, 0.02))
        geo_na = c.geo[0] + rng.randint(-2, 2)
        geo_eu = c.geo[1] + rng.randint(-2, 2)
        if c.geo[2] == 0:
            geo_eu = 100 - geo_na
        intake = round(rev * rng.uniform(0.9, 1.18), 1)
        top10 = rng.randint(18, 41)
        new_cust = rng.randint(12, 95)
        turnover = round(rng.uniform(6.0, 14.5), 1)
        training = round(rng.uniform(5.0, 11.0), 1)
        engagement = rng.randint(64, 82)
        emis = rng.randint(-9, 2)
        ltir = round(rng.uniform(0.15, 0.95), 2)
        renew = round(rng.uniform(38.0, 71.0), 1)
        states.append(dict(intake=intake, btb=round(intake / rev, 2), top10=top10, new_cust=new_cust,
            turnover=turnover, training=training, engagement=engagement, emis=emis, ltir=ltir, renew=renew,
            year=year, q=q, rev=rev, prev=prev, g=round((rev / prev - 1) * 100),
            seg=seg, seg_chg=seg_chg, seg_m=seg_m, gm=gm, gm_prev=gm_prev,
            rd=rd, smk=smk, ga=ga, opex=opex, oi=oi, hc=hc, hc_prev=hc_prev, dh=dh,
            ocf=ocf, capex=capex, fcf=fcf, cash=cash, debt=debt, dso=dso, dso_prev=dso_prev,
            div=div, bb=bb, kpi=kpi, kpi_prev=kpi_prev, kpi_step=step,
            lo=float(round(center * 0.98)), hi=float(round(center * 1.02)), ggm=round(c.gross_margin + rng.uniform(-1, 1)),
            na=geo_na, eu=geo_eu, row=100 - geo_na - geo_eu,
            rec=c.recurring + rng.randint(-2, 2) if c.recurring else 0,
        ))
        seg_prev = seg
    return states


# --------------------------------------------------------------------------- rendering
def quarter_label(year: int, q: int) -> str:
    return f"Q{q} {year}"


def doc_id(c: Company, year: int, q: int) -> str:
    return f"reports/{c.slug}-{year}-q{q}.md"


def _report_date(rng: random.Random, year: int, q: int) -> str:
    month = q * 3 + 1
    y = year + (1 if month > 12 else 0)
    month = month - 12 if month > 12 else month
    return f"{y}-{month:02d}-{rng.randint(18, 30):02d}"


def _direction(pct: float) -> str:
    return "up" if pct > 0 else "down" if pct < 0 else "flat"


def render(c: Company, idx: int, s: dict, yago: dict) -> tuple[str, list[dict]]:
    """Render one report; return (file text, facts). A fact names a sentence of the body."""
    rng = _rng("render", c.slug, s["year"], s["q"])
    label = quarter_label(s["year"], s["q"])
    title = f"{c.name} — Quarterly Report, {label}"
    facts: list[dict] = []
    paras: list[str] = []

    def fact(kind: str, sentence: str, **data: object) -> str:
        facts.append(dict(kind=kind, span=sentence, **data))
        return sentence

    front = "\n".join([
        "---", f"title: {title}", f"company: {c.name}", f"quarter: {s['year']}-Q{s['q']}",
        f"date: {_report_date(rng, s['year'], s['q'])}", "lang: en", "kind: report", "---", "",
    ])
    paras.append(f"# {title}")
    paras.append(
        f"This report presents the results of {c.name} for the {ORDINAL[s['q']]} quarter of "
        f"{s['year']}, the three months ended {QUARTER_END[s['q']]}, {s['year']}."
    )
    d = _direction(s["g"])
    paras.append("## Overview")
    paras.append(rng.choice(OVERVIEW[d]))
    paras.append(rng.choice(OVERVIEW_2))

    paras.append("## Highlights")
    kpi_vars = dict(v=s["kpi"], p=s["kpi_prev"], d=s["kpi_step"])
    bullets = [
        f"Gross margin of {s['gm']}%, compared with {s['gm_prev']}% in the previous quarter.",
        c.kpi_sentence.format(**kpi_vars),
    ]
    facts.append(dict(kind="kpi", span=bullets[1], **kpi_vars))
    facts.append(dict(kind="gross_margin", span=bullets[0], gm=s["gm"], gm_prev=s["gm_prev"]))
    bullets += rng.sample(HIGHLIGHT_EXTRA, 2)
    paras.append("\n".join(f"- {b}" for b in bullets))

    paras.append("## Developments during the quarter")
    ev = c.events[idx]
    ev_sentence = f"{rng.choice(EVENT_LEAD)} {ev}."
    facts.append(dict(kind="event", span=ev_sentence, event_index=idx))
    paras.append(f"{ev_sentence} {rng.choice(EVENT_FOLLOW)}")

    paras.append("## Product and technology")
    paras += rng.sample(PRODUCT, rng.randint(2, 3))

    paras.append("## Market environment")
    paras += rng.sample(MARKET, rng.randint(3, 5))

    paras.append("## Revenue")
    v = dict(g=abs(s["g"]), rev=_m(s["rev"]), prev=_m(s["prev"]))
    pool = REV_UP if s["g"] > 0 else REV_DOWN if s["g"] < 0 else REV_FLAT
    rev_s = fact("revenue", rng.choice(pool).format(**v), g=s["g"], rev=s["rev"], prev=s["prev"])
    yoy = round((s["rev"] / yago["rev"] - 1) * 100)
    yoy_s = rng.choice(YOY).format(yoy_dir="up" if yoy >= 0 else "down", yoy=abs(yoy))
    fact("yoy", yoy_s, yoy=yoy)
    geo_pool = GEO if s["row"] else GEO_NO_ROW
    geo_s = fact("geo", rng.choice(geo_pool).format(na=s["na"], eu=s["eu"], row=s["row"]),
                 na=s["na"], eu=s["eu"], row=s["row"])
    sent = [rev_s, rng.choice(REV_PREV).format(**v), yoy_s, rng.choice(DRIVER[d])]
    paras.append(" ".join(sent))
    second = [geo_s]
    if s["rec"]:
        second.append(fact("recurring", rng.choice(RECURRING).format(rec=s["rec"]), rec=s["rec"]))
    paras.append(" ".join(second))

    paras.append("## Segment results")
    paras.append(rng.choice(SEG_INTRO))
    for seg, srev, chg, sm in zip(c.segments, s["seg"], s["seg_chg"], s["seg_m"]):
        sd = _direction(chg)
        chg_txt = f"up {chg}% from" if chg > 0 else f"down {abs(chg)}% from" if chg < 0 else "unchanged from"
        line = rng.choice(SEG_LINE).format(seg=seg.name, srev=_m(srev), chg=chg_txt, sm=sm)
        fact("segment", line, segment=seg.name, srev=srev, chg=chg, sm=sm)
        paras.append(f"### {seg.name}\n\n{line} {rng.choice(SEG_DRIVER[sd]).format(products=seg.products)} "
                     f"{rng.choice(SEG_NOTE)}")

    paras.append("## Customers and orders")
    if c.slug == "orchardlane":
        cs = s["g"] + rng.choice((-1, 0, 0, 1))
        cs_s = fact("comparable", rng.choice(RETAIL_TRAFFIC).format(cs_dir="up" if cs >= 0 else "down", cs=abs(cs)), cs=cs)
        bk = f"{s['intake'] / s['rev'] * 48:.2f}"
        bk_s = fact("basket", rng.choice(RETAIL_BASKET).format(basket=bk, top10=s["top10"]), basket=bk, share=s["top10"])
        paras.append(" ".join([cs_s, bk_s, rng.choice(CUST_NOTE[2:])]))
    else:
        in_s = fact("intake", rng.choice(INTAKE).format(intake=_m(s["intake"]), btb=s["btb"]), intake=s["intake"], btb=s["btb"])
        t_s = fact("top10", rng.choice(TOP10).format(top10=s["top10"]), top10=s["top10"])
        n_s = fact("new_customers", rng.choice(NEW_CUST).format(new_cust=s["new_cust"]), new_cust=s["new_cust"])
        paras.append(" ".join([in_s, t_s, n_s, rng.choice(CUST_NOTE)]))

    paras.append("## Operating costs")
    opex_s = fact("opex", rng.choice(OPEX).format(opex=_m(s["opex"]), opex_pct=round(s["opex"] / s["rev"] * 100, 1)),
                  opex=s["opex"], opex_pct=round(s["opex"] / s["rev"] * 100, 1))
    split_s = fact("rd", rng.choice(OPEX_SPLIT).format(rd=_m(s["rd"]), sm_=_m(s["smk"]), ga=_m(s["ga"])),
                   rd=s["rd"], smk=s["smk"], ga=s["ga"])
    om = round(s["oi"] / s["rev"] * 100, 1)
    oi_pool = OPINC if s["oi"] >= 0 else OPLOSS
    oi_s = fact("opinc", rng.choice(oi_pool).format(oi=_m(abs(s["oi"])), om=abs(om)), oi=s["oi"], om=om)
    paras.append(" ".join([opex_s, split_s, oi_s]))
    hpool = HEAD_UP if s["dh"] > 0 else HEAD_DOWN
    hc_s = fact("headcount", rng.choice(hpool).format(hc=s["hc"], dh=abs(s["dh"])), hc=s["hc"], dh=s["dh"])
    paras.append(" ".join([hc_s] + rng.sample(COST_NOTE, 2)))

    paras.append("## Cash flow and balance sheet")
    cpool = CASH if s["fcf"] >= 0 else CASH_NEG
    cash_s = fact("fcf", rng.choice(cpool).format(ocf=_m(s["ocf"]), capex=_m(s["capex"]), fcf=_m(abs(s["fcf"]))),
                  ocf=s["ocf"], capex=s["capex"], fcf=s["fcf"])
    bal_s = fact("balance", rng.choice(BALANCE).format(cash=_m(s["cash"]), debt=_m(s["debt"])),
                 cash=s["cash"], debt=s["debt"])
    dso_s = fact("dso", rng.choice(DSO).format(dso=s["dso"], dso_prev=s["dso_prev"]), dso=s["dso"], dso_prev=s["dso_prev"])
    pay_s = rng.choice(PAYOUT[c.payout]).format(div=f"{s['div']:.2f}", bb=_m(s["bb"]))
    if c.payout != "none":
        fact("payout", pay_s, div=s["div"], bb=s["bb"])
    paras.append(" ".join([cash_s, rng.choice(CASH_NOTE)]))
    paras.append(" ".join([bal_s, dso_s, pay_s]))
    paras.append(rng.choice(CAPITAL))

    paras.append("## People")
    paras.append(" ".join([
        fact("turnover", rng.choice(TURNOVER).format(turnover=s["turnover"]), turnover=s["turnover"]),
        fact("training", rng.choice(TRAINING).format(training=s["training"]), training=s["training"]),
        fact("engagement", rng.choice(ENGAGE).format(engagement=s["engagement"]), engagement=s["engagement"]),
        rng.choice(PEOPLE_NOTE),
    ]))

    paras.append("## Sustainability and safety")
    emis_txt = f"down {-s['emis']}%" if s["emis"] < 0 else f"up {s['emis']}%" if s["emis"] > 0 else "unchanged"
    paras.append(" ".join([
        fact("emissions", rng.choice(EMISSIONS).format(emis_txt=emis_txt), emis=s["emis"]),
        fact("ltir", rng.choice(LTIR).format(ltir=f"{s['ltir']:.2f}"), ltir=s["ltir"]),
        fact("renewable", rng.choice(RENEWABLE).format(renew=s["renew"]), renew=s["renew"]),
        rng.choice(SUST_NOTE),
    ]))

    paras.append("## Outlook")
    guide_s = fact("guidance", rng.choice(GUIDE).format(lo=f"{s['lo']:,.0f}", hi=f"{s['hi']:,.0f}"),
                   lo=s["lo"], hi=s["hi"])
    ggm_s = fact("guide_gm", rng.choice(GUIDE_GM).format(ggm=s["ggm"]), ggm=s["ggm"])
    paras.append(" ".join([guide_s, ggm_s, rng.choice(FULL_YEAR)] + rng.sample(OUTLOOK_NOTE, 2)))
    paras.append(rng.choice(QUOTE))

    paras.append("## Risks")
    paras.append(rng.choice(RISK_INTRO))
    paras.append("\n".join(f"- {r}" for r in rng.sample(RISKS, rng.randint(6, 9))))

    paras.append("## Governance")
    paras += rng.sample(GOVERNANCE, 2)

    paras.append("## Forward-looking statements")
    paras.append(rng.choice(FORWARD))

    paras.append("## Definitions")
    paras.append(rng.choice(DEFINITIONS))

    body = "\n\n".join(paras) + "\n"
    for f in facts:  # record where each fact sits, in default-tokenizer tokens
        pos = body.index(f["span"])
        f["token_start"] = len(TOKEN.findall(body[:pos]))
    return front + body, facts


def generate() -> dict[str, tuple[str, list[dict], dict]]:
    """Return {doc_id: (text, facts, info)} for every report; info has company and quarter."""
    out: dict[str, tuple[str, list[dict], dict]] = {}
    for c in COMPANIES:
        states = simulate(c)
        for idx, (year, q) in enumerate(QUARTERS):
            s = states[len(HIDDEN) + idx]
            text, facts = render(c, idx, s, states[idx])
            info = dict(company=c.name, slug=c.slug, year=year, q=q, label=quarter_label(year, q),
                        index=idx, state=s)
            out[doc_id(c, year, q)] = (text, facts, info)
    return out


# --------------------------------------------------------------------------- figures
# The reports' figures as CSV tables (one per file), for `reports_sql`. Each value is the one
# a report's sentence states (from its facts), so SQL answers agree with the text.
FIGURES: dict[str, tuple[str, ...]] = {
    "reports": ("company", "year", "quarter", "doc_id", "revenue", "prev_revenue", "growth_pct",
                "yoy_pct", "gross_margin", "operating_expenses", "rd_expense",
                "operating_income", "operating_margin", "headcount", "operating_cash_flow",
                "capex", "free_cash_flow", "cash", "debt", "order_intake",
                "guidance_low", "guidance_high"),
    "segments": ("company", "year", "quarter", "segment", "revenue", "change_pct",
                 "operating_margin"),
}
# column -> (fact kind, fact field) for the reports table
_REPORT_FACTS = {
    "revenue": ("revenue", "rev"), "prev_revenue": ("revenue", "prev"),
    "growth_pct": ("revenue", "g"), "yoy_pct": ("yoy", "yoy"),
    "gross_margin": ("gross_margin", "gm"), "operating_expenses": ("opex", "opex"),
    "rd_expense": ("rd", "rd"), "operating_income": ("opinc", "oi"),
    "operating_margin": ("opinc", "om"), "headcount": ("headcount", "hc"),
    "operating_cash_flow": ("fcf", "ocf"), "capex": ("fcf", "capex"),
    "free_cash_flow": ("fcf", "fcf"), "cash": ("balance", "cash"), "debt": ("balance", "debt"),
    "order_intake": ("intake", "intake"), "guidance_low": ("guidance", "lo"),
    "guidance_high": ("guidance", "hi"),
}


def _csv(header: tuple[str, ...], rows: list[list[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def figures(reports: dict[str, tuple[str, list[dict], dict]]) -> dict[str, str]:
    """{table name: CSV text} of the reports' stated figures; money in $ million.

    A figure a report does not state (Orchard Lane's order intake) is left empty (NULL)."""
    tables: dict[str, list[list[object]]] = {name: [] for name in FIGURES}
    for did, (_, facts, info) in reports.items():
        key = [info["company"], info["year"], info["q"]]
        by_kind = {f["kind"]: f for f in facts if f["kind"] != "segment"}
        tables["reports"].append(key + [did] + [
            by_kind.get(kind, {}).get(name, "") for kind, name in _REPORT_FACTS.values()])
        tables["segments"] += [key + [f["segment"], f["srev"], f["chg"], f["sm"]]
                               for f in facts if f["kind"] == "segment"]
    return {name: _csv(FIGURES[name], rows) for name, rows in tables.items()}


def render_all() -> dict[Path, str]:
    """Every file this generator writes: the reports and the figures tables."""
    reports = generate()
    files = {OUT_DIR.parent / did: text for did, (text, _, _) in reports.items()}
    files.update({FIGURES_DIR / f"{name}.csv": text for name, text in figures(reports).items()})
    return files


def main(argv: list[str] | None = None) -> int:
    return write_or_check(__doc__.splitlines()[0], render_all, argv)


if __name__ == "__main__":
    sys.exit(main())
