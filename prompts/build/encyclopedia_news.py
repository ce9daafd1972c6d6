"""Prompt generator for the "encyclopedia" and "news" sources.

All text is original. Encyclopedia prompts restate well-known facts in our own
words; news prompts are wire-style stories about invented towns, councils,
companies and people, so nothing describes a real event.

Templates use a tiny markup:

* ``{a|b|c}``  -- pick one alternative (innermost first, so nesting works);
  ``{@k:a|b|c}`` groups sharing the key ``k`` all take the same position;
* ``[SLOT]``   -- a per-instance value (towns, people, companies, days ...);
  the same slot name gives the same value throughout one instance;
* ``[#lo-hi]`` -- a random integer in ``lo..hi``;
* ``<c>``, ``<m>``, ``<o>`` -- a place where a prompt may be cut, marking the
  expected next-token uncertainty: near-certain, medium, wide open.

Each template is expanded ``n`` times; for each expansion one cut is chosen so
that the source as a whole balances ending types (about a third each) and
lengths (short < 25 words, long > 60 words).  Only ``random.Random(SEED)`` is
used, so ``generate()`` is deterministic.
"""

from __future__ import annotations

import random
import re

SEED = 41207

_ALT = re.compile(r"\{([^{}]*)\}")
_NUM = re.compile(r"\[#(\d+)-(\d+)\]")
_SLOT = re.compile(r"\[([A-Z][A-Z0-9_]*)\]")
_MARK = re.compile(r"<([cmo])>")

# ---------------------------------------------------------------------------
# Slot vocabularies (all invented)
# ---------------------------------------------------------------------------

_TOWN_HEADS = [
    "Brack", "Dunn", "Harrow", "Thorn", "Lark", "Marl", "Wyn", "Cres", "Ferr",
    "Oaken", "Stel", "Rosel", "Pendle", "Calver", "Amber", "Tressel", "Holm",
    "Kessel", "Orm", "Vell",
]
_TOWN_TAILS = [
    "well", "mere", "bridge", "ford", "ton", "wick", "stead", "field",
    "haven", "combe", "dale", "moor", "by", "hurst",
]
_FIRST_F = [
    "Alana", "Priya", "Helen", "Ingrid", "Sofia", "Mei", "Fatima", "Clara",
    "Nadia", "Elena", "Leona", "Ruth", "Imogen", "Amara", "Dorothy",
]
_FIRST_M = [
    "Marcus", "Tomas", "Kwame", "Rafael", "Daniel", "Oliver", "Jonas", "Hugo",
    "Patrick", "Yusuf", "Graham", "Samir", "Victor", "Tobias", "Felix",
]
_LAST = [
    "Ashdown", "Brennick", "Calloway", "Derwent", "Eastham", "Farrow",
    "Garside", "Holloway", "Ingram", "Jessop", "Kettering", "Lindqvist",
    "Marchetti", "Novak", "Okafor", "Pemberton", "Quayle", "Rowntree",
    "Sandoval", "Thackeray", "Underhill", "Varga", "Whitlock", "Yardley",
    "Zielinski", "Abernethy", "Blackwood", "Castellano", "Dunmore", "Elsworth",
]
_CO_NAMES = [
    "Northgate", "Velora", "Kestrel", "Brightwater", "Halden", "Orrin",
    "Corvale", "Lumenor", "Ashgrove", "Tavistel", "Greyfen", "Solent Reach",
    "Marrowby", "Quillon", "Redcastle", "Everly",
]
_RIVERS = ["Olde", "Brannock", "Tessel", "Wenlow", "Marram", "Kell", "Ashby Water"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_WEEKDAYS = _DAYS[:5]
_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
]
_REGIONS = ["northern", "southern", "eastern", "western", "coastal", "upland", "central"]


def _slots(rng: random.Random) -> dict:
    towns = rng.sample([h + t for h in _TOWN_HEADS for t in _TOWN_TAILS], 3)
    female = rng.random() < 0.5
    firsts = rng.sample(_FIRST_F, 2) + rng.sample(_FIRST_M, 2)
    if not female:
        firsts = firsts[2:] + firsts[:2]
    firsts = [firsts[0], firsts[2], firsts[1]]
    lasts = rng.sample(_LAST, 3)
    cos = rng.sample(_CO_NAMES, 2)
    return {
        "TOWN": towns[0], "TOWN2": towns[1], "TOWN3": towns[2],
        "TOWNU": towns[0].upper(),
        "PERSON": f"{firsts[0]} {lasts[0]}", "PERSON_L": lasts[0],
        "HE": "she" if female else "he", "HIS": "her" if female else "his",
        "HEC": "She" if female else "He", "HISC": "Her" if female else "His",
        "WMN": "women's" if female else "men's",
        "HE2": "he" if female else "she", "HIS2": "his" if female else "her",
        "PERSON2": f"{firsts[1]} {lasts[1]}", "PERSON2_L": lasts[1],
        "PERSON3": f"{firsts[2]} {lasts[2]}", "PERSON3_L": lasts[2],
        "CO": cos[0], "CO2": cos[1],
        "RIVER": rng.choice(_RIVERS),
        "DAY": rng.choice(_WEEKDAYS), "DAY2": rng.choice(_DAYS),
        "MONTH": rng.choice(_MONTHS),
        "REGION": rng.choice(_REGIONS),
    }


def _expand(template: str, rng: random.Random) -> str:
    text = template
    linked: dict[str, int] = {}
    while True:
        m = _ALT.search(text)
        if not m:
            break
        body = m.group(1)
        key = None
        if body.startswith("@"):
            key, body = body[1:].split(":", 1)
        options = body.split("|")
        if key is None:
            choice = rng.choice(options)
        else:
            if key not in linked:
                linked[key] = rng.randrange(len(options))
            choice = options[linked[key] % len(options)]
        text = text[: m.start()] + choice + text[m.end():]
    text = _NUM.sub(lambda m: str(rng.randint(int(m.group(1)), int(m.group(2)))), text)
    values = _slots(rng)
    text = _SLOT.sub(lambda m: values[m.group(1)], text)
    return text


def _cuts(text: str) -> list[tuple[int, str, str]]:
    """All (marker index, category, prompt) cuts of an expanded template."""
    out = []
    for idx, m in enumerate(_MARK.finditer(text)):
        prefix = _MARK.sub("", text[: m.start()]).rstrip()
        prefix = re.sub(r"[ \t]+", " ", prefix).strip()
        prefix = re.sub(r" +\n", "\n", prefix)
        if len(prefix.split()) >= 7:
            out.append((idx, m.group(1), prefix))
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _bucket(text: str) -> str:
    n = len(text.split())
    return "s" if n < 25 else ("l" if n > 60 else "m")


_CAT_TARGET = {"c": 1 / 3, "m": 1 / 3, "o": 1 / 3}
_LEN_TARGET = {"s": 0.28, "m": 0.34, "l": 0.38}
STATS: dict[str, dict] = {}


def _build(source: str, templates: list[tuple[int, str]], seed: int) -> list[dict]:
    rng = random.Random(seed)
    seen: set[str] = set()
    cat_n = {"c": 0, "m": 0, "o": 0}
    len_n = {"s": 0, "m": 0, "l": 0}
    total = 0
    records = []
    for n, template in templates:
        used_idx: dict[int, int] = {}
        for _ in range(n):
            for _attempt in range(8):
                options = [
                    (idx, cat, p) for idx, cat, p in _cuts(_expand(template, rng))
                    if _norm(p) not in seen
                ]
                if options:
                    break
            else:
                continue

            def score(opt):
                idx, cat, p = opt
                b = _bucket(p)
                return (_CAT_TARGET[cat] * (total + 1) - cat_n[cat]
                        + _LEN_TARGET[b] * (total + 1) - len_n[b]
                        - 4.0 * used_idx.get(idx, 0))

            scored = [(score(o) + rng.random() * 0.25, i) for i, o in enumerate(options)]
            idx, cat, prompt = options[max(scored)[1]]
            used_idx[idx] = used_idx.get(idx, 0) + 1
            seen.add(_norm(prompt))
            cat_n[cat] += 1
            len_n[_bucket(prompt)] += 1
            total += 1
            records.append({"source": source, "text": prompt})
    STATS[source] = {"endings": dict(cat_n), "lengths": dict(len_n)}
    return records


# ---------------------------------------------------------------------------
# Encyclopedia templates: (instances, text)
# ---------------------------------------------------------------------------

ENCYCLOPEDIA: list[tuple[int, str]] = []

# ---------------------------------------------------------------------------
# News templates: (instances, text)
# ---------------------------------------------------------------------------

NEWS: list[tuple[int, str]] = []


def generate() -> list[dict]:
    return _build("encyclopedia", ENCYCLOPEDIA, SEED) + _build("news", NEWS, SEED + 1)



# ---------------------------------------------------------------------------
# Template data (appended in chunks below)
# ---------------------------------------------------------------------------

# Encyclopedia, part 1: short statements of fact, mostly near-certain endings.
ENCYCLOPEDIA += [(1, t) for t in [
    "The capital city of Australia is not Sydney, as many people assume, but <c>Canberra.",
    "Water, at sea-level pressure, boils at a temperature of 100 degrees <c>Celsius.",
    "The chemical symbol for gold, taken from its Latin name aurum, is <c>Au.",
    "The largest planet in the solar system, a gas giant with a famous storm, is <c>Jupiter.",
    "The longest river in South America, which flows east into the Atlantic, is the <c>Amazon.",
    "Light travels through a vacuum at roughly three hundred thousand kilometres per <c>second.",
    "The human heart is divided into four chambers: two atria and two <c>ventricles.",
    "Photosynthesis takes place mainly in the leaves of plants, inside small structures called <c>chloroplasts.",
    "The Pacific is the largest and deepest of the five oceans on <c>Earth.",
    "Mount Everest, the highest mountain above sea level, lies on the border between Nepal and <c>China.",
    "In the periodic table, the element with atomic number one is <c>hydrogen.",
    "A triangle whose three sides are all of equal length is called an <c>equilateral triangle.",
    "The Great Barrier Reef stretches along the north-eastern coast of <c>Australia.",
    "A year on Mars lasts almost twice as long as a year on <c>Earth.",
    "The adult human body normally contains two hundred and six <c>bones.",
    "In Western music, an octave is divided into twelve <c>semitones.",
    "The Sahara, which covers much of North Africa, is the largest hot desert in the <c>world.",
    "Insects have six legs, while spiders, which are not insects, have <c>eight.",
    "The Earth takes about three hundred and sixty-five days to complete one orbit around the <c>Sun.",
    "A football match under standard rules lasts ninety minutes, divided into two <c>halves.",
    "The freezing point of pure water on the Fahrenheit scale is thirty-two <c>degrees.",
    "The smallest unit of a chemical element that keeps its properties is the <c>atom.",
    "Diamonds and graphite are both made entirely of the element <c>carbon.",
    "The currency used by most member states of the European Union is the <c>euro.",
    "The Moon's gravity is the main cause of the ocean <c>tides.",
    "Mammals are warm-blooded animals that feed their young with <c>milk.",
    "The outermost layer of the Earth, on which the continents rest, is called the <c>crust.",
    "A word that has the opposite meaning of another word is called an <c>antonym.",
    "The study of the weather and the atmosphere is known as <c>meteorology.",
    "The Olympic Games of the modern era are usually held once every four <c>years.",
    "Red, yellow and blue are traditionally taught as the three primary colours in <c>painting.",
    "Sound cannot travel through a vacuum because it needs a <c>medium such as air or water.",
    "The process by which a caterpillar turns into a butterfly is called <c>metamorphosis.",
    "In chess, the only piece that can jump over other pieces is the <c>knight.",
    "Most of the air we breathe is not oxygen but <c>nitrogen.",
    "A piano keyboard of standard size has eighty-eight <c>keys.",
    "The ancient city of Rome was built, according to tradition, on seven <c>hills.",
    "The instrument used to measure atmospheric pressure is called a <c>barometer.",
    "Bats are the only mammals capable of true, sustained <c>flight.",
    "The Andes, which run along the western edge of South America, are the longest continental mountain <c>range.",
    "Venus is the hottest planet in the solar system, even though Mercury is closer to the <c>Sun.",
    "Antarctica is the coldest, windiest and, on average, highest of the seven <c>continents.",
    "In a basketball game, a shot made from beyond the arc is worth three <c>points.",
    "The gas that plants absorb from the air during photosynthesis is carbon <c>dioxide.",
    "A polygon with eight sides is known as an <c>octagon.",
    "The blue whale is thought to be the largest animal that has ever <c>lived.",
    "The language with the largest number of native speakers in the world is <c>Mandarin Chinese.",
    "Sedimentary rocks are formed from layers of material that settle and are slowly <c>compressed over time.",
    "Bees communicate the location of flowers to one another by performing a kind of <c>dance.",
    "The Renaissance began in <m>Italy in the fourteenth century and spread across Europe.",
    "Economists usually measure the total output of a country's economy using <m>gross domestic product.",
    "The violin, the viola, the cello and the double bass together make up the <c>string section of an orchestra.",
    "An animal that eats only plants is called a <c>herbivore, while one that eats only meat is a carnivore.",
    "Most volcanoes are found along the edges of tectonic <c>plates.",
    "The chemical formula for water, H2O, shows that each molecule contains two hydrogen atoms and one <c>oxygen atom.",
    "In tennis, a score of zero is traditionally called <c>love.",
    "Tokyo is the capital of <c>Japan and one of the most populous metropolitan areas in the world.",
    "The speed of sound in air is far lower than the speed of <c>light.",
    "DNA carries genetic information in a sequence of four chemical <c>bases.",
    "Inflation is a general rise in the level of <c>prices over time.",
    "The Pyramids of Giza were built as tombs for the <c>pharaohs of ancient Egypt.",
    "Saturn is best known for its wide, bright system of <c>rings.",
    "A haiku is a short Japanese poem traditionally made up of three <c>lines.",
    "The first person to walk on the Moon, in 1969, was Neil <c>Armstrong.",
    "Penicillin, one of the earliest antibiotics, was discovered by Alexander <c>Fleming.",
    "The theory of general relativity was published by Albert <c>Einstein.",
    "The printing press with movable metal type was developed in Europe by Johannes <c>Gutenberg.",
    "Charles Darwin is best known for his theory of evolution by natural <c>selection.",
    "The Mona Lisa, painted by Leonardo da <c>Vinci, hangs in the Louvre in Paris.",
]]

# Encyclopedia, part 2: explanatory paragraphs with several possible cuts.
ENCYCLOPEDIA += [(2, t) for t in [
    # geography
    "The Nile is one of the longest rivers in the world. Its two main branches, the White Nile and the Blue Nile, meet near the city of <c>Khartoum in Sudan. From there the river flows north through <m>the desert of Egypt, where almost the entire population lives within a few kilometres of its banks. For thousands of years the annual flood deposited fertile silt across the valley, which allowed <m>farmers to grow wheat and barley in an otherwise dry land. Since the completion of the Aswan High Dam in 1970, <o>the flood has been controlled. <o>",
    "Iceland sits on the Mid-Atlantic Ridge, the boundary where the North American and Eurasian plates slowly pull <c>apart. As a result, the island is one of the most volcanically active places on <c>Earth. Geothermal energy heats most of its homes, and hot springs are common across the <m>countryside. The interior is largely uninhabited: a high plateau of lava fields, glaciers and <m>gravel deserts. Most of the population lives in and around the capital, <c>Reykjavik. <o>",
    "A delta is a landform created where a river meets a slower body of water, such as a sea or a <c>lake. As the current slows, the river drops the sand and silt it has been carrying, and over centuries these deposits build up into a broad, flat <m>plain. The name comes from the Greek letter delta, because the delta of the <c>Nile has a roughly triangular shape. Deltas are often extremely fertile, but they are also low-lying and <m>vulnerable to flooding and rising sea levels. <o>",
    "Fjords are long, narrow inlets of the sea with steep walls on either <c>side. They were carved by glaciers during the ice ages, when thick rivers of ice ground their way down existing valleys and deepened them far below sea <c>level. When the ice melted, the sea flooded in. Norway is the country most closely associated with fjords, but they are also found in <m>New Zealand, Chile, Greenland and Canada. <o>",
    "The Amazon rainforest covers much of the basin of the Amazon River and spreads across nine <m>countries, with the largest share in <c>Brazil. It is home to an extraordinary variety of <m>life, including tens of thousands of plant species and millions of species of <c>insects. Because the forest stores vast amounts of carbon, scientists regard its future as important for the climate of the whole <c>planet. Deforestation, driven mainly by <m>cattle ranching and farming, <o>",
    # history
    "The Roman Empire was, at its height, one of the largest states the ancient world had ever <c>seen. It stretched from Britain in the north-west to Egypt and Mesopotamia in the <m>east. Roads, aqueducts and a common legal system helped hold this territory <c>together. In the year 395 the empire was permanently divided into a western and an eastern <c>half. The western half collapsed in the fifth century, while the eastern half, often called the Byzantine Empire, survived until the fall of <c>Constantinople in 1453. <o>",
    "The Industrial Revolution began in Britain in the second half of the eighteenth <c>century. New machines for spinning and weaving cotton moved production from homes into <m>factories, and improved steam engines provided power that no longer depended on rivers or <c>wind. Coal and iron became the foundations of the new economy. Towns grew rapidly as people left the <c>countryside in search of <m>work, often living in crowded and unhealthy conditions. Within a century, <o>",
    "The Silk Road was not a single road but a network of trade routes linking China with Central Asia, the Middle East and <c>Europe. Silk was only one of the goods carried along it; merchants also traded spices, horses, glass, paper and precious <c>metals. Just as important were the <m>ideas that travelled with them. Buddhism spread from India into <m>China along these routes, and technologies such as papermaking moved gradually <m>westward. <o>",
    "The printing press changed the way knowledge was shared in Europe. Before its arrival, books were copied by hand, usually by <c>monks or professional scribes, and were rare and expensive. Printing made it possible to produce hundreds of identical copies in the time it once took to make <c>one. Pamphlets, Bibles and scientific works circulated widely, and literacy slowly <m>increased. Historians often link the new technology to the spread of the <m>Reformation and, later, to the scientific revolution. <o>",
    "Ancient Egypt was one of the earliest great civilisations. Its rulers, known as <c>pharaohs, were regarded as both kings and living gods. The Egyptians developed a <m>system of writing using pictorial symbols called <c>hieroglyphs, and they built monumental temples and tombs. Much of what we know about their daily life comes from paintings and objects found in <m>burial chambers. The decipherment of hieroglyphs in the 1820s was made possible by the <c>Rosetta Stone, which carried the same text in three scripts. <o>",
    "The Cold War was a long period of rivalry between the United States and the Soviet <c>Union and their allies. It is called cold because the two superpowers never fought each other <c>directly. Instead, the competition took the form of an <m>arms race, a space race, propaganda and <m>proxy wars in other parts of the world. The Berlin Wall, built in 1961, became its best-known <m>symbol. The period is usually said to have ended in <c>1991, when <o>",
    # science
    "An atom consists of a small, dense nucleus surrounded by a cloud of <c>electrons. The nucleus contains protons, which carry a positive electric charge, and neutrons, which carry no <c>charge. The number of protons determines which element the atom <c>is: every carbon atom, for example, has six. Atoms of the same element can <m>have different numbers of neutrons; these variants are called <c>isotopes. Some isotopes are unstable and <o>",
    "Newton's first law of motion states that an object will remain at rest, or keep moving in a straight line at constant speed, unless a force acts upon <c>it. This tendency to resist changes in motion is called <c>inertia. The second law relates force, mass and <c>acceleration, and the third states that for every action there is an equal and opposite <c>reaction. Together these laws formed the basis of <m>classical mechanics for more than two centuries. <o>",
    "Plate tectonics is the theory that the outer shell of the Earth is broken into large, rigid plates that move slowly over the <m>mantle beneath them. The plates travel only a few centimetres each year, roughly as fast as fingernails <c>grow. Where two plates collide, one may be forced beneath the other, producing deep ocean trenches and chains of <m>volcanoes. Where they slide past each other, stress builds up and is released in <c>earthquakes. <o>",
    "Evolution by natural selection works through a simple set of conditions. Individuals in a population vary, some of that variation is inherited, and more offspring are produced than can <c>survive. Individuals whose traits suit their environment slightly better tend to leave more <c>offspring. Over many generations, useful traits therefore become more <c>common. Given enough time and isolation, <o>",
]]

ENCYCLOPEDIA += [(2, t) for t in [
    # biology
    "The cell is the basic unit of all living <c>things. Some organisms, such as bacteria, consist of a single cell, while the human body contains tens of <c>trillions. Plant and animal cells share many <m>features, including a nucleus that holds the genetic <c>material. Plant cells, however, also have a rigid cell wall and <m>chloroplasts, which animal cells lack. <o>",
    "Honeybees live in colonies that may contain tens of thousands of individuals. Each colony has a single queen, whose main task is to lay <c>eggs. The great majority of the bees are female workers, which gather nectar and pollen, build the wax comb, care for the young and defend the <m>hive. Male bees, called <c>drones, exist mainly to mate with queens from other colonies. In winter the workers cluster tightly together and <o>",
    "The human immune system defends the body against bacteria, viruses and other <c>pathogens. Its first line of defence includes physical barriers such as the skin and the lining of the <m>nose and throat. If these are breached, white blood cells move in to attack the <m>invaders. Some of these cells keep a memory of the pathogens they have met, which is why a person who has recovered from measles is usually <c>immune for life. Vaccines work by <o>",
    "Octopuses are marine animals with eight arms and no internal or external <c>skeleton. They are widely regarded as the most intelligent of all <m>invertebrates: in experiments they have solved puzzles, opened jars and found their way through <m>mazes. Many species can change the colour and texture of their skin in a fraction of a <c>second, which helps them <m>hide from predators. Most octopuses live only <m>one or two years. <o>",
    "Migration is the regular, often seasonal, movement of animals from one region to <c>another. The Arctic tern makes one of the longest journeys of any animal, travelling each year from its breeding grounds in the Arctic to the <c>Antarctic and back again. Scientists believe that migrating birds find their way using <m>a combination of the sun, the stars, landmarks and the Earth's magnetic <c>field. <o>",
    "Coral reefs are built by colonies of tiny animals called <c>polyps, which produce hard skeletons of calcium <c>carbonate. Although reefs cover only a small fraction of the ocean floor, they shelter around a quarter of all marine <c>species. Most reef-building corals depend on <m>algae that live inside their <m>tissues. When the water becomes too warm, the corals expel these algae and turn white, a process known as <c>bleaching. <o>",
    # astronomy
    "The Sun is a star of average size, about four and a half billion years <c>old. It produces energy in its core through nuclear fusion, turning hydrogen into <c>helium. The light leaving its surface takes a little over eight <c>minutes to reach the Earth. In roughly five billion years, the Sun is expected to swell into a red <c>giant. <o>",
    "A black hole is a region of space where gravity is so strong that nothing, not even <c>light, can escape from it. Black holes of the most familiar kind form when very massive stars collapse at the end of their <c>lives. The boundary around a black hole beyond which escape is impossible is called the event <c>horizon. At the centre of most large galaxies, including our own, <o>",
    "The Moon is the Earth's only natural <c>satellite. It always shows the same face to the Earth, because it rotates on its axis in the same time it takes to complete one <c>orbit. The dark patches visible to the naked eye are vast plains of ancient, solidified <m>lava, which early astronomers mistook for seas. Between 1969 and 1972, twelve <m>astronauts walked on its surface. <o>",
    "Comets are small, icy bodies that orbit the <c>Sun, often along long, stretched-out paths. When a comet comes close to the Sun, heat turns some of its ice into gas, which releases dust and forms a glowing cloud called a <c>coma. Sunlight and the solar wind push this material outward into one or more <c>tails, which always point away from the <c>Sun. <o>",
    "The Milky Way is the galaxy that contains our solar <c>system. It is a barred spiral galaxy, with a central bar of stars and several curving arms that wind outward from the <m>centre. Estimates of the number of stars it contains range from one hundred billion to four hundred <c>billion. From Earth, the galaxy appears as a faint band of light stretching across the night <c>sky. <o>",
    "Exoplanets are planets that orbit stars other than the <c>Sun. The first ones around ordinary stars were confirmed in the <m>1990s, and thousands are now known. Most are detected indirectly, for example by watching for the tiny dip in a star's brightness that occurs when a planet passes in front of <c>it. Astronomers are particularly interested in planets that lie in the habitable zone, where temperatures might allow liquid <c>water to exist. <o>",
    # technology
    "The transistor is a small electronic component that can amplify a signal or switch it on and <c>off. It was invented at <m>Bell Laboratories in <c>1947 and quickly replaced the bulky vacuum tubes used in early <m>radios and computers. Modern microchips contain <m>billions of transistors, each far smaller than a human <c>cell. The steady shrinking of transistors over several decades is often described by <c>Moore's law. <o>",
    "The internet grew out of research networks built in the late 1960s and <c>1970s. Its key idea was <m>packet switching: messages are broken into small pieces, sent separately across the network and reassembled at their <c>destination. The World Wide Web, invented by Tim Berners-Lee in 1989, added a system of linked pages that could be viewed in a <c>browser. <o>",
    "A steam engine converts the heat energy of steam into mechanical <c>work. Early engines were used mainly to <m>pump water out of <c>mines. James Watt's improvements in the late eighteenth century, especially the separate condenser, made engines far more <c>efficient. Steam power soon drove factories, ships and, from the early nineteenth century, <c>railways. <o>",
    "The Global Positioning System uses a constellation of satellites, each carrying a very precise <c>clock. A receiver on the ground picks up signals from several satellites at once and works out its distance from each one by measuring how long the signals took to <c>arrive. With signals from at least four satellites, it can calculate its position in three <c>dimensions. <o>",
    "Batteries store energy in chemical form and release it as electricity. The lithium-ion battery, now found in most phones, laptops and electric <c>cars, is valued because it holds a lot of energy for its <c>weight. Its performance slowly declines with each charging <c>cycle. Researchers are working on new designs that <o>",
]]

ENCYCLOPEDIA += [(2, t) for t in [
    # art
    "Impressionism was an art movement that began in France in the <c>1860s and 1870s. Its painters, among them Claude Monet, Pierre-Auguste Renoir and Berthe <c>Morisot, tried to capture the changing effects of light and colour. They often worked <m>outdoors, with quick, visible <c>brushstrokes. The name of the movement came from a painting by Monet called Impression, <c>Sunrise, which a critic mocked in a review. <o>",
    "Fresco is a technique of wall painting in which pigments are applied to wet <c>plaster. As the plaster dries, the colours become bound into the wall <m>itself, which makes the painting very durable. The method was widely used in Renaissance Italy; the ceiling of the Sistine Chapel, painted by <c>Michelangelo, is the most famous example. <o>",
    "Perspective is a set of drawing techniques used to create the illusion of depth on a flat <c>surface. In linear perspective, parallel lines that move away from the viewer appear to meet at a single point on the <c>horizon, known as the vanishing <c>point. Artists of the early Italian Renaissance studied these rules <m>carefully, and their work changed European painting. <o>",
    "Origami is the Japanese art of folding <c>paper into decorative shapes without cutting or <c>gluing it. Traditional designs include cranes, frogs and <m>flowers. In recent decades, mathematicians and engineers have taken a serious interest in folding patterns, which have been used to design <m>solar panels for spacecraft and medical devices. <o>",
    # music
    "A symphony is a large piece of music for <c>orchestra, usually divided into four separate sections called <c>movements. The form developed in the eighteenth century, and composers such as Haydn, who wrote more than one hundred of them, helped to establish its <m>structure. Beethoven's nine symphonies greatly expanded the scale and emotional range of the <c>form. <o>",
    "Jazz developed in the early twentieth century in the African American communities of New <c>Orleans. It drew on <m>blues, ragtime, brass band music and <m>spirituals. One of its defining features is <c>improvisation: musicians create new melodies on the spot while playing over a set of <c>chords. Over the following decades jazz branched into many styles, including swing, bebop and <o>",
    "The guitar is a stringed instrument that is usually played by plucking or strumming the strings with the fingers or a <c>pick. A standard guitar has six <c>strings. Metal strips called frets run across the neck, dividing it into <c>semitones. The electric guitar, which uses magnetic pickups and an <c>amplifier, became central to rock music in the 1950s and <c>1960s. <o>",
    "In music, tempo is the speed at which a piece is <c>played. It is often measured in beats per <c>minute. Composers traditionally indicated tempo with Italian words: allegro means fast and lively, while adagio means <c>slow. A device called a <c>metronome can be used to keep a steady beat during practice. <o>",
    # sport
    "Cricket is a bat-and-ball game played between two teams of eleven <c>players. One team bats, trying to score runs, while the other bowls and fields, trying to dismiss the <c>batters. The game is especially popular in <m>England, Australia, India, Pakistan and the <m>West Indies. Matches range from short formats lasting a few hours to Test matches that can last up to five <c>days. <o>",
    "The marathon is a long-distance running race over 42.195 <c>kilometres. The event is named after the legend of a Greek messenger who ran from the battlefield of Marathon to <c>Athens to announce a victory. It was included in the first modern Olympic Games in <c>1896. Today, large city marathons attract tens of thousands of <m>runners. <o>",
    "The Tour de France is a multi-stage cycling race held each year, mostly in <c>France, over about three <c>weeks. Riders cover thousands of kilometres, including difficult mountain stages in the Alps and the <c>Pyrenees. The overall leader wears a yellow <c>jersey. <o>",
    "Swimming became part of the modern Olympic programme at the very first Games in 1896. Competitive events use four main strokes: freestyle, backstroke, breaststroke and <c>butterfly. In a medley race, a swimmer or a relay team swims all <c>four. Races are held in pools that are fifty <c>metres long. <o>",
    # economics
    "Supply and demand is one of the basic models of <c>economics. When the price of a good rises, buyers generally want less of it, while sellers are willing to offer <c>more. The price at which the quantity demanded equals the quantity supplied is called the equilibrium <c>price. If demand increases while supply stays the same, the price tends to <c>rise. <o>",
    "A central bank manages the currency and monetary policy of a country or group of <c>countries. One of its main tools is the interest <c>rate at which it lends to commercial banks. Raising interest rates tends to <m>slow borrowing and spending, which can help bring <c>inflation under control. Many central banks are legally independent of the <c>government. <o>",
    "Comparative advantage is a principle, associated with the economist David <c>Ricardo, which explains why countries benefit from <c>trade. A country has a comparative advantage in a good if it can produce it at a lower opportunity cost than other <c>countries. Even a country that is better at producing everything can gain by specialising in <m>what it does relatively best. <o>",
    "Money serves three main functions in an <c>economy. It is a medium of <c>exchange, a unit of account and a store of <c>value. Before money, people relied on <c>barter, the direct exchange of one good for another, which works only when each side wants what the other <c>offers. <o>",
    "A recession is commonly defined as a significant decline in economic activity lasting more than a few <c>months. A frequently used rule of thumb treats two consecutive quarters of falling gross domestic <c>product as a recession. During a recession, unemployment usually <c>rises, businesses cut investment and <o>",
]]

# Encyclopedia, part 3: varied article structures (definitions, headings,
# lists, comparisons); alternatives give several distinct instances each.
ENCYCLOPEDIA += [
    (3, "{Granite is an igneous rock that forms when magma cools slowly <c>deep underground, which gives it large, visible <c>crystals.|Basalt is a dark, fine-grained rock that forms when lava cools <c>quickly at or near the surface.|Marble is a metamorphic rock formed when limestone is subjected to great heat and <c>pressure.|Sandstone is a sedimentary rock made of grains of <c>sand that have been cemented together.} It is widely used in <m>building. <o>"),
    (3, "In {@d:economics|physics|biology|linguistics|music theory}, the term <m>{@d:'elasticity' describes how strongly one quantity responds to a change in another.|'resonance' describes the tendency of a system to vibrate strongly at certain frequencies.|'symbiosis' describes a close, long-term relationship between two different species.|'morpheme' describes the smallest unit of language that carries meaning.|'cadence' describes a sequence of chords that brings a phrase to a close.} <o>"),
    (3, "Etymology\n\nThe word {'planet' comes from a Greek word meaning <c>wanderer, because the planets appear to move against the background of fixed stars.|'volcano' comes from Vulcan, the Roman god of <c>fire.|'algebra' comes from an Arabic word meaning the reunion of broken <c>parts.|'dinosaur' was coined in the nineteenth century from Greek words meaning terrible <c>lizard.} <o>"),
    (2, "Rocks are usually classified into three main groups: <o>igneous, sedimentary and <c>metamorphic. Igneous rocks form from molten material, sedimentary rocks from layers of deposited <c>particles, and metamorphic rocks from existing rocks changed by heat and <c>pressure. <o>"),
    (2, "The {four|main} states of matter most commonly described are <m>solid, liquid, gas and <c>plasma. In a solid, particles are held in fixed positions; in a liquid, they can slide past one <c>another; in a gas, they move <m>freely and fill any container. <o>"),
    (3, "Mercury may refer to: <o>\n\n* Mercury, the smallest planet and the one closest to the <c>Sun\n* Mercury, a chemical element and the only metal that is liquid at room <c>temperature\n* Mercury, the messenger of the gods in Roman <c>mythology <o>"),
    (3, "Unlike {frogs, which usually have smooth, moist skin, toads tend to have <m>dry, warty skin and shorter legs.|alligators, which have broad, rounded snouts, crocodiles usually have <m>narrower, more pointed snouts.|butterflies, which mostly fly by day, moths are <m>mainly active at night.|rabbits, which are born blind and hairless, hares are born <m>with fur and open eyes.} <o>"),
    (3, "A {@t:leap year|solar eclipse|lunar eclipse|tsunami|monsoon} is <m>{@t:a year with an extra day, added to keep the calendar in step with the Earth's orbit.|an event in which the Moon passes between the Sun and the Earth and blocks the Sun's light.|an event in which the Earth passes between the Sun and the Moon and casts its shadow on the Moon.|a series of large ocean waves usually caused by an undersea earthquake.|a seasonal shift in winds that brings a rainy season to parts of Asia and elsewhere.} <o>"),
    (2, "History\n\nThe earliest known {written laws|maps|calendars} were produced in <m>ancient Mesopotamia. Over the following centuries, <o>"),
    (2, "The human digestive system breaks food down into substances that the body can <c>absorb. Digestion begins in the <c>mouth, where chewing and saliva start to break down food. It continues in the <c>stomach, and most nutrients are absorbed in the small <c>intestine. <o>"),
    (2, "Classification\n\nBiologists group living things into a hierarchy of ranks. The most commonly taught ranks, from broadest to narrowest, are domain, kingdom, phylum, class, order, family, genus and <c>species. Each species is given a two-part scientific name; humans, for example, are Homo <c>sapiens. <o>"),
    (3, "{@c:Tea|Coffee|Maize|Sugar cane|Rice|The potato} was first {cultivated|domesticated} in <m>{@c:China|Ethiopia|Mesoamerica|New Guinea|Asia|the Andes}, and {from there|over many centuries} it spread <m>across the world. <o>"),
    (2, "The water cycle describes how water moves between the land, the oceans and the <c>atmosphere. Heat from the Sun causes water to <c>evaporate from seas and lakes. The vapour rises, cools and condenses into <c>clouds, and eventually falls back to the ground as rain or <c>snow. <o>"),
    (3, "Key facts\n\nCountry: {@k:Japan|Egypt|Brazil|Canada|Kenya}\nContinent: <c>{@k:Asia|Africa|South America|North America|Africa}\nCapital: <c>{@k:Tokyo|Cairo|Brasilia|Ottawa|Nairobi}\nOfficial language: <m>{@k:Japanese|Arabic|Portuguese|English and French|Swahili and English}\nCurrency: <c>{@k:yen|Egyptian pound|real|Canadian dollar|Kenyan shilling} <o>"),
    (3, "There are several reasons why {the Bronze Age came to an end in the eastern Mediterranean|dinosaurs became extinct at the end of the Cretaceous|the Western Roman Empire fell}. Historians and scientists have proposed <m>a number of explanations, including <o>"),
    (3, "The {@i:violin|trumpet|flute|harp|oboe|trombone} belongs to the <c>{@i:string|brass|woodwind|string|woodwind|brass} family of instruments. <o>"),
    (2, "Most earthquakes last only a few <c>seconds, but they can cause enormous damage. Their strength is measured on a magnitude scale, on which each whole number represents roughly thirty-two times more released <c>energy than the one below. The point on the surface directly above an earthquake's origin is called the <c>epicentre. <o>"),
    (2, "See also\n\n* List of the longest rivers\n* List of the highest mountains\n* <o>"),
    (3, "{@u:The kilogram|The metre|The second|The ampere|The kelvin} is the base unit of <c>{@u:mass|length|time|electric current|temperature} in the International System of <c>Units. <o>"),
    (2, "Typical diet\n\nThe {red fox|brown bear|badger|raccoon} is an <c>omnivore, and its diet varies with the <c>seasons. It eats <m>small animals, insects, fruit and, near towns, scraps left by <c>people. <o>"),
    (2, "A democracy is a system of government in which power rests with the <c>people, who usually exercise it by electing <c>representatives. The word comes from Greek roots meaning rule by the <c>people. In a direct democracy, citizens vote on laws <m>themselves. <o>"),
    (3, "Among the {@l:most widely spoken|oldest recorded|most studied} languages of the world are <m>{@l:English, Spanish and Hindi|Sumerian, Egyptian and Chinese|Latin, Greek and Sanskrit}. <o>"),
    (2, "Photosynthesis can be summarised in a single sentence: using the energy of sunlight, plants turn carbon dioxide and water into sugar and <c>oxygen. The sugar provides the plant with energy and with the raw material it needs to <m>grow. <o>"),
    (2, "In a typical medieval European village, most people worked the <c>land. Fields were often divided into long strips, and each family farmed several strips scattered across the open <c>fields. The largest building was usually the <m>church, and the local lord often lived in a manor house nearby. <o>"),
    (2, "Overview\n\nThe {@z:Arctic fox|emperor penguin|polar bear|musk ox} is adapted to life in an extremely cold <c>climate. Its thick {@z:fur|layer of feathers|fur|woolly coat} and a layer of fat help it keep <c>warm. <o>"),
    (2, "Applications\n\nLasers are used in {many fields|a wide range of settings}, including <o>"),
    (2, "Glaciers form in places where more snow falls in winter than melts in <c>summer. Over many years, the snow is compressed into dense <c>ice, which begins to flow slowly downhill under its own <c>weight. <o>"),
    (3, "The {@w:Great Wall of China|Colosseum in Rome|Taj Mahal} was built {@w:over many centuries|in the first century|in the seventeenth century} {@w:to protect the northern frontier of the Chinese states|as a venue for gladiators and public shows|as a tomb for the wife of a Mughal emperor}. Today it is <m>one of the most visited monuments in the world. <o>"),
    (2, "The main differences between weather and climate can be summarised as follows: <o>weather describes conditions over hours or <c>days, while climate describes the average pattern over many <c>years. <o>"),
    (2, "Bread is made by mixing flour with water and usually a raising agent such as <c>yeast. The yeast feeds on sugars in the dough and releases carbon <c>dioxide, which forms bubbles and makes the bread <c>rise. <o>"),
    (2, "Description\n\nThe {oak|beech|ash|birch} is a {large|tall|common} deciduous <c>tree, which means it loses its leaves every <c>autumn. <o>"),
    (2, "A solar panel converts sunlight directly into <c>electricity. It is made of many cells, usually of <c>silicon, in which light knocks electrons loose and produces an electric <c>current. <o>"),
    (3, "Early life\n\nLittle is known about the childhood of most ancient writers. In the case of {the poet Homer|the philosopher Socrates|the historian Herodotus}, <o>"),
    (2, "The rules of chess are simple to learn but the game is famously hard to <c>master. Each player begins with sixteen pieces: one king, one queen, two rooks, two bishops, two knights and eight <c>pawns. The aim is to trap the opposing king, a position known as <c>checkmate. <o>"),
    (2, "In the nineteenth century, photography developed from a slow scientific curiosity into a popular <m>medium. Early photographs required exposure times of several <c>minutes, so sitters had to stay perfectly <c>still. <o>"),
]

# Encyclopedia, part 4: longer passages whose cuts come late.
ENCYCLOPEDIA += [(2, t) for t in [
    "The Black Death was a pandemic of plague that swept across Asia, the Middle East and Europe in the middle of the fourteenth century. It reached the ports of Italy in 1347 and spread along <m>trade routes with terrible speed. Within a few years it had killed somewhere between a third and a half of the population of Europe. The disease was caused by a <m>bacterium carried by fleas that lived on rats and other animals, although people at the time had no idea of this. The sudden shortage of workers that followed had lasting effects: in many regions, surviving labourers were able to demand higher <c>wages, and the old system of <m>serfdom slowly weakened. Outbreaks of plague continued to return every few decades for more than three hundred <c>years. <o>",
    "The greenhouse effect is a natural process that keeps the surface of the Earth much warmer than it would otherwise be. Sunlight passes through the atmosphere and warms the ground, which then gives off heat in the form of infrared radiation. Certain gases in the atmosphere, including <m>water vapour, carbon dioxide and methane, absorb part of this radiation and send some of it back towards the surface. Without this effect the average temperature of the planet would be well below freezing. Since the Industrial Revolution, the burning of coal, oil and gas has greatly increased the amount of carbon <c>dioxide in the air. Most scientists agree that this has strengthened the greenhouse effect and is the main cause of the rise in global <c>temperatures observed over the past century. <o>",
    "The Himalaya is the highest mountain range on Earth and contains all of the world's peaks that rise more than eight thousand metres above sea level. It stretches for about two and a half thousand kilometres across parts of Pakistan, India, Nepal, Bhutan and China. The range was formed, and is still being pushed upward, by the slow collision of the Indian plate with the Eurasian plate, which began roughly fifty million years ago. Its glaciers feed several of the great <m>rivers of Asia, including the Indus, the Ganges and the <c>Brahmaputra, which together supply water to hundreds of millions of <c>people. The mountains are also of great religious importance: many peaks are regarded as <m>sacred, and <o>",
    "A Gothic cathedral can usually be recognised by a few distinctive features. Pointed arches replaced the rounded arches of the earlier Romanesque style, and ribbed vaults allowed builders to roof wide spaces with stone. Perhaps the most striking innovation was the flying buttress, an external support that carried the weight of the roof outward and down to the ground. Because the walls no longer had to bear the whole load, they could be opened up with large windows of stained <c>glass, which filled the interior with coloured light. The style emerged in <m>northern France in the twelfth century, and it spread across Europe over the following three hundred <c>years. Many cathedrals took several generations to <c>complete. <o>",
    "A modern symphony orchestra is usually made up of four families of instruments. The strings, the largest group, include the violins, violas, cellos and double basses. The woodwind section includes flutes, oboes, clarinets and bassoons, while the brass section includes horns, trumpets, trombones and the tuba. The percussion section can include timpani, cymbals, drums and many other instruments that are struck or shaken. The players are led by a conductor, who sets the tempo, shapes the interpretation of the music and gives cues to the different <c>sections. By tradition, the orchestra tunes before a concert to a note played by the <c>oboe. <o>",
    "The periodic table arranges the chemical elements in order of increasing atomic number, so that elements with similar properties fall into the same columns. The Russian chemist Dmitri Mendeleev published an early version of the table in 1869. His great insight was to leave gaps for elements that had not yet been discovered, and to predict their properties. When gallium and germanium were later found and matched his predictions, the table was widely accepted. The columns are called groups and the rows are called <c>periods. The elements in the far right-hand column, such as helium, neon and argon, are known as the noble <c>gases because they rarely react with other <c>substances. <o>",
    "The first electronic computers were built in the 1940s. They filled entire rooms, consumed huge amounts of electricity and relied on thousands of vacuum tubes, which frequently failed. They were used mainly for <m>scientific and military calculations, such as working out the paths of artillery shells or breaking codes. The invention of the transistor and, later, the integrated circuit allowed computers to become smaller, cheaper and far more reliable. By the late 1970s, personal computers small enough to sit on a desk were being sold to the <c>public, and by the early twenty-first century many people carried more computing power in their pocket than had existed in the whole world a few decades <c>earlier. <o>",
    "Vaccination works by training the immune system to recognise a disease before the body meets it in its dangerous form. A vaccine contains a weakened or inactivated form of a pathogen, a piece of it, or instructions that allow the body's cells to make a harmless part of it. The immune system responds by producing antibodies and memory cells. If the person is later exposed to the real pathogen, the immune system can respond quickly and strongly. Edward Jenner demonstrated the principle at the end of the eighteenth century, using material from cowpox to protect against <c>smallpox. Two centuries later, after a long global campaign of vaccination, smallpox became the first human disease to be completely <c>eradicated. <o>",
    "The modern Olympic Games were founded at the end of the nineteenth century, largely through the efforts of the French educator Pierre de Coubertin. He was inspired by the <m>athletic festivals of ancient Greece, which had been held at Olympia for more than a thousand years. The first modern Games took place in Athens in 1896 and included athletics, cycling, fencing, gymnastics, swimming and wrestling. Women competed for the first time four years later, in Paris. A separate Winter Games, for sports on snow and ice, was introduced in <c>1924. Today the Summer Games bring together athletes from more than two hundred <m>countries and territories, and the opening ceremony, in which the athletes parade behind their national <c>flags, is watched by a huge audience. <o>",
    "A stock market is a place, today usually an electronic system, where shares in companies are bought and sold. A share represents a small part of the ownership of a company. Companies sell shares to <m>raise money for investment, and investors buy them in the hope that the company will grow and that the value of their shares will rise. Many companies also pay part of their profits to shareholders in the form of <c>dividends. Share prices change constantly as buyers and sellers react to news about companies, the economy and world events. Stock market indexes track the combined value of a selected group of companies and are widely used as a measure of the health of the <m>economy. <o>",
    "The Mediterranean climate is named after the region around the Mediterranean Sea, but it is also found in parts of California, central Chile, the southern tip of Africa and south-western Australia. It is characterised by <m>hot, dry summers and mild, wet winters. The long dry season shapes the plant life: many native shrubs have small, tough leaves that reduce water loss, and wildfires are a natural part of the landscape. Farmers in these regions have long grown crops that tolerate summer drought, such as olives, grapes and <c>figs. Because of its pleasant weather, the climate zone is also associated with <m>tourism, and many of its coastlines are densely <m>populated. <o>",
    "The telephone converts sound into electrical signals that can be sent along a wire and turned back into sound at the other end. Alexander Graham Bell received a patent for the device in 1876, although several other inventors were working on similar ideas at the same time. At first, calls had to be connected by <m>hand by operators at a central exchange, who plugged cables into a large switchboard. Automatic exchanges gradually replaced them during the twentieth century. The arrival of mobile phones, which use radio waves rather than wires, changed the way people communicate: by the early twenty-first century there were more mobile phone subscriptions in the world than <c>people. <o>",
    "Taxation is the means by which governments raise most of the money they need to pay for public services such as schools, hospitals, roads and defence. Taxes can be levied on income, on profits, on property, on goods and services, and on many other things. A tax is called progressive when people with higher incomes pay a larger share of their income, and regressive when they pay a smaller share. Economists study how taxes affect <m>behaviour, for example whether high taxes on income discourage people from working or whether taxes on tobacco reduce <c>smoking. The design of a tax system involves difficult choices between raising enough revenue, treating people fairly and <o>",
    "Football, known as soccer in some countries, is played by two teams of eleven players on a rectangular field with a goal at each end. The aim is to move the ball into the opposing team's goal without using the hands or arms; only the goalkeeper may handle the ball, and only within the penalty area. A match is controlled by a referee, who can show a yellow card as a warning and a red card to send a player <c>off. The modern rules were first written down in <m>England in 1863. The sport is now played in almost every country, and the World Cup, held every four <c>years, is among the most watched sporting events on <c>Earth. <o>",
    "Tides are the regular rise and fall of the surface of the sea. They are caused mainly by the gravitational pull of the Moon, with a smaller contribution from the Sun. The Moon's gravity pulls the ocean into a slight bulge on the side of the Earth facing it, and a second bulge forms on the opposite side. As the Earth rotates through these bulges, most coastlines experience two high tides and two low tides roughly every <c>day. When the Sun, the Moon and the Earth are lined up, at new moon and full moon, their effects combine to produce especially large tides known as spring <c>tides. When they are at right angles, the smaller tides are called neap <c>tides. <o>",
    "Bronze is an alloy made mainly of copper, usually mixed with tin. It is harder and more durable than pure copper, and it can be cast into complex shapes. The discovery of how to make bronze was so important that historians named a whole period of human history after it. The Bronze Age began at different times in different regions, appearing in the Near East more than five thousand years ago. Bronze was used for <m>tools, weapons, armour, vessels and works of art. Eventually it was largely replaced for everyday tools by <c>iron, which was harder to work but far more <m>plentiful. Bronze has remained popular for statues, bells and <o>",
]]

# Encyclopedia, part 5: article openings and summaries with open-ended verbs.
ENCYCLOPEDIA += [
    (2, "{@v:Venice|Amsterdam|Bangkok} is a city built around a network of <c>canals. For centuries its wealth depended on <m>{@v:trade with the eastern Mediterranean|overseas trade and shipping|river trade and rice}, and today it is <m>a major destination for tourists. <o>"),
    (2, "{The wolf|The lion|The elephant|The dolphin} is a highly social animal that lives in <m>groups. Members of a group cooperate to <m>find food and protect their young, and they communicate using <m>a wide range of sounds and body signals. <o>"),
    (2, "The {nineteenth|twentieth} century saw enormous changes in the way people <m>lived and worked. Among the most important were <o>"),
    (2, "{Wheat|Rice|Maize} is one of the most important food crops in the world. It is grown mainly for its <c>grain, which is used to make <m>{@f:flour for bread, pasta and many other foods|a staple food eaten boiled or steamed|animal feed, flour and cooking oil}. <o>"),
    (2, "Scientists classify stars according to their <m>temperature and brightness. The hottest stars shine with a <m>bluish light, while the coolest appear <c>red. Our own Sun is a <m>yellow star of middle temperature. <o>"),
    (2, "The {@g:electric guitar|saxophone|piano|drum kit} has played a central role in <m>{@g:rock and pop music|jazz|classical and popular music|popular music} since <m>the twentieth century. <o>"),
    (2, "Recycling is the process of turning used materials into new <c>products. Paper, glass, aluminium and many plastics can be <c>recycled, which reduces the need for raw materials and <m>cuts the amount of waste sent to landfill. However, <o>"),
    (2, "The invention of {the wheel|writing|agriculture} is often described as one of the turning points of human <c>history. It made it possible for people to <m>{@x:move heavy loads over land and build carts and chariots|keep records, pass on laws and preserve stories|settle in one place and build villages and, later, cities}. <o>"),
    (2, "Architecture\n\nThe building is designed in the {Gothic|Baroque|Neoclassical|Art Deco} style and is best known for <m>its {tall|richly decorated|elegant} facade. <o>"),
    (2, "A {hurricane|tornado|blizzard|heatwave} can cause serious damage to <m>{homes, crops and roads|buildings and power lines|transport and livestock}. Meteorologists issue warnings so that people have time to <m>prepare. <o>"),
    (2, "Marine mammals such as whales, seals and dolphins evolved from ancestors that lived on <c>land. Although they spend most or all of their lives in the water, they still breathe <c>air and feed their young with <c>milk. <o>"),
    (2, "Reception\n\nWhen it was first {performed|published|exhibited}, the work received <m>mixed reviews. Some critics praised its <m>originality, while others <o>"),
    (2, "Legacy\n\nThe {scientist's|composer's|painter's} influence on later generations was <m>considerable. <o>"),
    (2, "The most common way to generate electricity is to spin a turbine, which drives a <c>generator. The turbine can be turned by <m>steam, which is produced by burning fuel or by nuclear reactions, or directly by <m>wind or flowing water. <o>"),
    (2, "Economists distinguish between goods, which are physical objects, and <c>services, which are activities performed for others. Examples of services include <o>"),
    (2, "Ballet developed at the royal courts of <m>Italy and France and became a professional art form in the seventeenth century. Dancers train for many years to master its <m>precise positions and movements, and many of its technical terms are in <c>French. <o>"),
    (2, "Chess is believed to have originated in <m>India around the sixth century, from where it spread to <m>Persia and later to Europe. <o>"),
    (2, "A {lighthouse|dam|suspension bridge|canal lock} is a structure designed to <m>{@s:guide ships and warn them of dangerous coasts|hold back water and control its flow|carry a road across a wide gap using cables|raise and lower boats between stretches of water at different levels}. <o>"),
    (2, "The population of the world passed eight billion in the early 2020s. Most of the growth in recent decades has taken place in <m>Asia and Africa, while in many wealthy countries the population is <m>ageing and birth rates have fallen. <o>"),
    (2, "Tourism is one of the largest industries in the world. It provides jobs and income for many regions, but it can also <m>put pressure on fragile environments and <o>"),
]

# Encyclopedia, part 6: more long passages.
ENCYCLOPEDIA += [(2, t) for t in [
    "Rivers shape the land through which they flow. In their upper course, close to the source, they usually run fast down steep slopes and cut narrow, V-shaped valleys into the rock. Waterfalls form where a layer of hard rock lies over softer rock that wears away more quickly. Further downstream the gradient becomes gentler, the valley widens and the river begins to wind from side to side in loops called meanders. Over time a meander may be cut off from the main channel, leaving behind a curved lake known as an <c>oxbow lake. Near the mouth, where the river slows down and drops its load of sediment, it may form a <c>delta or an <c>estuary. <o>",
    "Printmaking is a group of techniques for making several copies of an image from a single prepared surface. In a woodcut, the artist carves away the parts of a wooden block that should stay white, leaving the raised lines to be inked. In an etching, a metal plate is coated with a protective layer, the design is scratched through it, and the plate is placed in acid, which bites into the exposed lines. Japanese woodblock prints of the eighteenth and nineteenth centuries, which often showed actors, landscapes and scenes of city life, had a strong influence on European <m>painters, especially the <c>Impressionists. <o>",
    "The Moon landings of the late 1960s and early 1970s were the result of an intense competition between the United States and the Soviet Union. The Soviet Union had launched the first artificial satellite in 1957 and sent the first human into orbit in 1961. In response, the American government set the goal of landing a person on the Moon before the end of the decade. The Apollo programme achieved this in July 1969, when two astronauts walked on the surface while a third remained in orbit. Six crewed missions eventually landed, bringing back hundreds of kilograms of rock and <c>soil, which scientists are still <m>studying. No human has walked on the Moon since <c>1972. <o>",
    "Dinosaurs were a diverse group of reptiles that first appeared more than two hundred million years ago and dominated life on land for much of the Mesozoic Era. Some, like the long-necked sauropods, were among the largest animals ever to walk the Earth, while others were no bigger than a chicken. Most non-bird dinosaurs died out about sixty-six million years ago, probably as a result of the impact of a large asteroid, which threw enormous amounts of dust and gas into the atmosphere. Not all dinosaurs disappeared, however: most scientists now agree that modern <c>birds are descended from a group of small, feathered <m>dinosaurs. <o>",
    "Opera is a form of theatre in which the story is told mostly or entirely through music and singing. It began in Italy around the year 1600, when a group of poets and musicians in Florence tried to revive what they believed to be the style of ancient Greek drama. A typical opera combines solo songs, called arias, with ensembles, choruses and passages of sung dialogue known as recitative. The performers are accompanied by an orchestra, usually placed in a pit in front of the stage. Among the most frequently performed composers of opera are Mozart, Verdi and <c>Puccini, and many of the best-known works are still sung in <m>Italian. <o>",
    "A bank takes in deposits from customers and lends much of that money out to other customers, who pay interest on their loans. The difference between the interest the bank charges borrowers and the interest it pays to savers is one of its main sources of income. Because only a small part of the money deposited is kept on hand, a bank can run into difficulty if too many customers try to withdraw their savings at the same time, an event known as a bank <c>run. To reduce this risk, most countries regulate banks closely and many guarantee deposits up to a certain <c>amount. <o>",
    "The human brain contains roughly eighty-six billion nerve cells, called neurons, which communicate with one another through electrical and chemical signals. Each neuron can form connections with thousands of others, creating a network of extraordinary complexity. Different regions of the brain are specialised for different tasks: the cerebellum helps to coordinate movement and balance, while the outer layer of the large cerebrum is involved in thought, language and perception. Although the brain makes up only about two per cent of body weight, it uses around a fifth of the body's <c>energy. <o>",
    "Wind power has been used for thousands of years, first to drive sailing ships and later to turn windmills that ground grain or pumped water. Modern wind turbines use long blades to turn a generator, which produces electricity. They are usually grouped together in wind farms, both on land and, increasingly, at sea, where winds are stronger and more constant. Wind power produces no greenhouse gases while it operates, but its output varies with the weather, so electricity systems that rely on it need ways to <m>store energy or to <o>",
]]

# ---------------------------------------------------------------------------
# News templates.  Every place, person, company and club is invented.
# ---------------------------------------------------------------------------

# News, part 1: local politics, councils and elections.
NEWS += [
    (5, "[TOWNU], [DAY] (Wire) - Councillors in [TOWN] voted [#12-19] to [#3-9] on [DAY] night to <m>{@p:approve|reject|delay} a plan to {close the town's last public swimming pool|build [#2-4]00 new homes on former farmland|introduce parking charges in the town centre|merge two primary schools}. The decision followed <m>{a three-hour debate|months of public consultation|a petition signed by more than [#2-9],000 residents}. Council leader [PERSON] said the authority had faced <m>\"no easy choices\" and that the {@p:plan|alternative|extra time} would <m>{protect services for the next decade|allow the council to balance its books|give residents a chance to be heard}. Opposition councillors accused the leadership of <m>{rushing the decision|ignoring local opinion|failing to consider alternatives}, and one, [PERSON2], said [HE2] would ask for the matter to be <m>reviewed. <o>"),
    (5, "The mayor of [TOWN], [PERSON], has announced that [HE] will not seek <c>re-election next year, ending <m>{a decade|nearly twenty years|two terms} in the post. In a statement released on [DAY], [PERSON_L] said: <o>\"It has been the privilege of my life to serve this <c>town. <o>"),
    (4, "Residents of [TOWN] will go to the polls on [DAY2] to choose a new council, with <m>{housing|local transport|the future of the high street|rising council tax} expected to dominate the campaign. A total of [#23-61] candidates are standing for [#15-22] <c>seats. Polling stations will be open from 7 a.m. until 10 <c>p.m., and counting is expected to continue <m>through the night. At the last election, turnout in the town was just [#24-39] per <c>cent, and all the main groups have said they will focus on persuading <m>younger voters to take part. The result is expected to be declared <o>"),
    (4, "[TOWN] council has admitted that it overspent its budget by [#2-9].[#1-9] million {pounds|dollars|euros} in the last financial <c>year, blaming <m>{rising energy costs|higher demand for social care|the cost of repairing flood damage|delays to a major building project}. The authority's finance director, [PERSON], told a meeting of the audit committee that <m>urgent savings would be needed. \"We cannot <c>continue on this path,\" [HE] <c>said. <o>"),
    (4, "Plans to {pedestrianise|redevelop|reopen} [TOWN]'s {market square|old bus station|riverside quarter} have been <m>{put on hold|approved in principle|sent back for revision} after <m>{objections from local traders|a funding gap was discovered|a public inquiry}. \"We have listened to what people told us,\" said [PERSON], the councillor responsible for <c>planning. \"The next step is <o>"),
    (4, "Voters in the [REGION] district of [TOWN2] have elected [PERSON] as their new representative on the regional <c>assembly. [PERSON_L], who stood as an independent, won [#40-58] per cent of the vote, defeating the sitting member by just over [#2-9]00 <c>votes. Turnout was [#28-51] per <c>cent. Speaking after the count, the new member <m>thanked [HIS] supporters and promised to <o>"),
    (4, "A proposal to {@r:rename|merge|expand} [TOWN] {@r:after its founding mill owners|with the neighbouring village of [TOWN2]|by building a new district on its eastern edge} was <m>defeated at a {stormy|packed|brief} public meeting on [DAY] evening. <o>"),
    (4, "The [TOWN] planning committee has granted permission for a [#12-17]-storey {office block|apartment building|hotel} on the site of the former [CO] {factory|depot|warehouse}, despite <m>objections from more than [#1-6]00 residents. Opponents argued that the building would <m>{overshadow nearby homes|increase traffic on already busy roads|spoil views of the river|change the character of the area}. The developer said construction would begin <m>{early next year|within six months|in the spring} and would create around [#1-4]00 <c>jobs. A spokesperson for the residents' group said it was <m>considering a legal challenge. <o>"),
    (3, "Council tax in [TOWN] will rise by [#2-6].[#1-9] per cent from <c>April, after councillors approved the authority's budget by a narrow <c>margin. <o>"),
    (4, "[TOWN2] council is to cut the opening hours of its {libraries|leisure centres|recycling sites} from next <c>month as it tries to save [#150-900],000 a <c>year. Union representatives said the changes would <m>{affect dozens of jobs|hit the most vulnerable residents hardest|be a false economy}. <o>"),
]

# News, part 2: business and markets.
NEWS += [
    (5, "[CO] {Foods|Logistics|Retail|Motors|Textiles}, the [TOWN]-based {group|company|firm}, reported a [#8-34] per cent {@g:rise|fall} in <m>annual profit on [DAY], {@g:helped by <m>{strong demand for its own-brand products|lower fuel costs|cost cuts at its largest plant|a weaker currency}|hit by <m>{weak demand in its home market|higher fuel costs|a long strike at its largest plant|a stronger currency}}. Revenue came in at [#110-990] million, slightly {above|below} analysts' <c>expectations. Chief executive [PERSON] said the company was <m>\"cautiously optimistic\" about the year ahead but warned that <m>{higher wages|uncertain consumer spending|rising interest rates|supply problems} could <m>weigh on results. Shares in the company {rose|fell} [#2-9] per <c>cent in early trading. <o>"),
    (4, "Shares in [CO] Pharmaceuticals {jumped|slumped} [#11-38] per cent on [DAY] after the company said its experimental treatment for <m>{migraine|asthma|a rare liver disease|chronic back pain} had {met|failed to meet} its main goal in a late-stage <c>trial. <o>"),
    (4, "[CO] Energy is to cut [#2-9]00 jobs at its {headquarters|plant|offices} in [TOWN] as part of a <m>restructuring aimed at saving [#30-90] million a year, the company said on [DAY]. The firm, which employs around [#3-9],000 people {nationwide|across the region}, said the cuts would be made over the next <m>{eighteen months|two years|year} and that it would try to avoid <c>compulsory redundancies. A spokesperson for the union representing workers at the site described the news as <m>\"a bitter blow\" for the town. <o>"),
    (4, "[CO] Software has agreed to buy its smaller rival [CO2] Systems for [#120-850] million in <c>cash, the two companies said on [DAY]. The deal, which still needs the approval of <m>regulators and shareholders, is expected to be completed <m>{by the end of the year|in the second half of next year|within six months}. <o>"),
    (4, "Retail sales in the [REGION] region {rose|fell} by [#1-3].[#1-9] per cent in [MONTH] compared with the previous <c>month, according to figures published on [DAY]. Economists had expected <o>"),
    (4, "MARKETS - Stocks {@s:ended higher|closed lower} on [DAY] as investors weighed <m>{fresh data on inflation|comments from central bank officials|a batch of company earnings reports|news of weaker factory output}. The main index {@s:gained|lost} [#1-9]0 points, or 0.[#2-9] per <c>cent. Among the biggest movers was [CO] Brewing, which {rose|fell} after <o>"),
    (4, "[CO] Motors will open a new {battery|assembly|components} plant on the outskirts of [TOWN], creating around [#3-9]00 jobs, the company announced <m>{on [DAY]|this week|yesterday}. <o>"),
    (4, "The family-owned [CO] {bakery|bookshop|hardware store|department store}, which has traded in [TOWN] for more than [#60-140] years, will close its doors for the last time at the end of <c>{[MONTH]|the month}. The owners blamed <m>{rising rents|competition from online retailers|falling footfall|the cost of energy} and said they had been <m>unable to find a buyer. Customers queued outside on [DAY] to <o>"),
    (3, "Consumer price inflation {@i:eased|edged up} to [#2-6].[#1-9] per cent in [MONTH], official figures showed on [DAY], as the cost of <m>{food|energy|housing|transport} {@i:fell|rose} for a second month. <o>"),
]

# News, part 3: weather.
NEWS += [
    (5, "Forecasters have issued {a yellow|an amber} weather warning for {@w:heavy rain|snow and ice|thunderstorms} across [REGION] areas, with {@w:[#40-90] millimetres of rain|up to [#10-25] centimetres of snow|[#20-50] millimetres of rain and frequent lightning} possible in places {on [DAY2]|over the weekend|overnight}. Drivers are being urged to take extra <c>care, and travellers are advised to check with operators before setting <c>off. <o>"),
    (4, "Temperatures are expected to fall well below <c>freezing overnight in [TOWN] and the surrounding area, with forecasters warning of <m>{ice on untreated roads|freezing fog|a sharp frost}. <o>"),
    (4, "[TOWN] recorded its hottest {June|July|August} day on record on [DAY], when the thermometer reached [#34-41] degrees <c>Celsius at the town's weather station, beating the previous record set in [#1976-2015]. The local hospital reported a rise in patients suffering from <m>{heat exhaustion|sunburn and dehydration|breathing problems}, and the council opened <m>cool rooms in its libraries for elderly residents. Forecasters said the heat would <m>{ease by the weekend|last until at least [DAY2]|break with thunderstorms later in the week}. <o>"),
    (4, "Hundreds of homes in [TOWN] were flooded on [DAY] after the River [RIVER] burst its <c>banks following two days of torrential <c>rain. Emergency services rescued {dozens of|several} people from <m>{their homes|cars trapped in rising water|a caravan park}, and a temporary shelter was set up at <m>{the town hall|a local school|the sports centre}. The [REGION] environment agency said river levels were expected to <m>peak overnight. Residents described <o>"),
    (3, "WEATHER OUTLOOK: After a {dry|cold|mild|wet} start to the week, conditions will become <m>{increasingly unsettled|brighter and warmer|colder} from [DAY], with <o>"),
    (3, "A {dry spring|long, dry summer|winter with almost no rain} has left reservoirs serving [TOWN] and [TOWN2] at just [#31-48] per cent of capacity, prompting the water company to {introduce a hosepipe <c>ban from next week|ask customers to <m>cut their water use|warn that restrictions may <m>follow}. <o>"),
]

# News, part 4: sport.
NEWS += [
    (5, "[TOWN] {United|Athletic|Rovers} came from behind to beat [TOWN2] {City|Albion|Wanderers} [#2-4]-1 on [DAY2], with a late goal from <m>substitute [PERSON] settling the <c>match. The visitors had taken the lead in the [#8-30]th minute through <m>{a header from a corner|a penalty|a long-range shot}, and held on until shortly after half-<c>time. [TOWN] manager [PERSON2] said [HIS2] side had shown <m>\"real character\" and <o>"),
    (4, "The match between [TOWN] {Rangers|Town|Harriers} and [TOWN2] {Athletic|United|Villa} ended in a goalless <c>draw on [DAY2], leaving both sides in the bottom half of the <c>table. Chances were few, and the best of them fell to <o>"),
    (4, "[PERSON], the [#19-23]-year-old from [TOWN], won the [WMN] title at the [TOWN2] {Open|Classic|Championships} on [DAY2], beating the top seed in straight <c>sets. It is [HIS] first title at this <c>level. \"I still <m>can't believe it,\" [PERSON_L] said afterwards. <o>"),
    (4, "Rain forced the abandonment of the {county|regional} cricket match between [TOWN] and [TOWN2] on [DAY2], with [TOWN] on [#112-290] for [#2-7] after <c>{42|35|28} overs. Earlier, opening batter [PERSON] had reached [HIS] <m>{first century of the season|half-century from just [#38-55] balls}. <o>"),
    (3, "More than [#3-9],000 runners took part in the [TOWN] half <c>marathon on [DAY2]. The [WMN] race was won by [PERSON] in one hour [#2-9] <c>minutes, and <o>"),
    (4, "SPORT IN BRIEF: [TOWN] {Rugby Club|Hockey Club|Netball Club} {have appointed [PERSON] as their new head coach|have parted company with their head coach, [PERSON],} <m>{after a run of five straight defeats|ahead of the new season|following a successful promotion campaign}. <o>"),
    (4, "[TOWN] {@b:Lions|Hawks|Giants} secured their place in the national basketball final with a [#90-99]-[#70-86] win over [TOWN2] on [DAY2] night. [PERSON] led the scoring with [#22-38] <c>points, including {five|six|seven} three-<c>pointers, and the home crowd of more than [#3-9],000 <m>{rose to their feet|chanted the players' names|stayed long after the final whistle}. The final will be played <m>{next weekend|in [TOWN3] on [DAY]|at a neutral venue}, where the {@b:Lions|Hawks|Giants} will face <o>"),
    (3, "Swimmer [PERSON] broke the {national|championship} record in the 200 metres {butterfly|backstroke|freestyle} at the [TOWN] pool on [DAY2], finishing in one minute [#52-59] <c>seconds. <o>"),
    (3, "The [TOWN] to [TOWN2] cycle race, first held in [#1921-1968], will not take place this year because of <m>{roadworks along the route|a lack of sponsors|safety concerns}, organisers announced on [DAY]. <o>"),
]

# News, part 5: science, health and education announcements.
NEWS += [
    (4, "Researchers at the University of [TOWN] say they have developed a {cheap|simple|rapid} test that can detect <m>{early signs of crop disease|contamination in drinking water|a common infection in cattle} in under [#10-40] minutes. The team, led by Professor [PERSON], published its findings in a scientific journal on [DAY]. Independent experts welcomed the work but said it would need to be <m>tested in larger trials before it could be <m>used widely. [PERSON_L] said the group hoped to <o>"),
    (4, "Astronomers working at the [TOWN2] observatory have identified {a previously unknown comet|a pair of stars orbiting each other every few hours|an unusually bright supernova in a distant galaxy}, the observatory said on [DAY]. The discovery was made by <m>{a graduate student reviewing archive images|an automated survey telescope|an amateur astronomer who contacted the team}. <o>"),
    (4, "A {rare|nationally endangered|long-lost} species of {beetle|orchid|freshwater mussel|bat} has been found in {woodland|wetland|a disused quarry} near [TOWN], [#20-80] years after it was last <c>recorded in the area. Ecologist [PERSON], who made the discovery during a routine <m>survey, said it was <m>\"an extraordinary moment\". <o>"),
    (4, "Doctors at [TOWN] General Hospital have begun using a new {robotic surgical system|scanner|triage system} which they say will <m>{cut waiting times|reduce the length of hospital stays|speed up diagnosis} for patients across the [REGION] region. The equipment, funded partly by <m>a local charity appeal, cost [#1-4].[#1-9] <c>million. Consultant [PERSON] said: <o>"),
    (4, "Pupils at [TOWN] {Primary|Secondary|High} School will {start lessons half an hour later|have a new science block|be offered free breakfasts} from <m>{September|next term|the new year}, the head teacher announced on [DAY]. The change follows <m>{a two-year trial at schools in [TOWN2]|a successful fundraising campaign by parents|a survey of families}. <o>"),
    (3, "The [TOWN] Institute of Technology has received a grant of [#2-9] million to study <m>{battery recycling|flood prediction|soil health|antibiotic resistance} over the next <c>{three|four|five} years. <o>"),
    (4, "A study of more than [#2-9],000 adults in the [REGION] region has found that people who {walk for at least thirty minutes a day|sleep fewer than six hours a night|eat breakfast regularly} are <m>{less likely to develop heart disease|more likely to report poor concentration|slightly less likely to gain weight}. The authors cautioned that the study shows an <c>association and does not prove <c>cause and effect. <o>"),
]

# News, part 6: courts and justice.
NEWS += [
    (5, "A [#24-61]-year-old {man|woman} from [TOWN] has pleaded <c>{not guilty|guilty} to {stealing equipment worth [#12-90],000 from a building site|fraud involving a local charity|dangerous driving} at [TOWN2] Crown Court. The case was <m>{adjourned until [MONTH]|sent for trial next year|adjourned for reports}, and the defendant was <m>{released on bail|remanded in custody}. <o>"),
    (4, "After a trial lasting {two|three|four|five} weeks, the jury returned a verdict of not <c>guilty on all {three|four|five} charges. Outside court, the defendant's lawyer, [PERSON], said [HIS] client was <m>\"relieved\" and <o>"),
    (4, "A judge has ruled that [TOWN] council acted <m>{unlawfully|within its powers} when it <m>{closed a children's centre without consultation|granted planning permission for a waste plant|sold a public park to developers}. The case was brought by a group of residents, who argued that <o>"),
    (4, "[CO] {Foods|Textiles|Logistics|Brewing} has been fined [#80-600],000 after a worker {was seriously injured|lost two fingers|suffered a broken leg} at its [TOWN] {plant|depot|site} in [MONTH] {two years ago|last year}. The court heard that the company had <m>{failed to carry out a proper risk <c>assessment|ignored repeated warnings from <m>staff|not trained the worker to use the <c>equipment}, and that {a safety guard on the machine had been <m>removed months earlier|a faulty forklift had been left <m>in service|the emergency stop button did not <m>work}. {In a statement after the hearing, the company said it <m>deeply regretted the incident and had since|Passing sentence, the judge said the failings were <m>serious and that|The worker's family said in a statement that} <o>"),
    (3, "The trial of {two|three|four} men accused of a series of {burglaries|thefts from vehicles|cash machine raids} across [TOWN] and [TOWN2] is due to begin on [DAY], the court was <c>told. <o>"),
    (4, "COURT REPORT: A landlord from [TOWN] has been ordered to pay [#3-9],000 in compensation to former tenants after failing to <m>{repair a leaking roof|return their deposits|deal with damp and mould} for more than a <c>year. Magistrates said the conditions in the property were <o>"),
]

# News, part 7: transport.
NEWS += [
    (4, "Rail passengers between [TOWN] and [TOWN2] face {weeks|months} of disruption after engineers discovered <m>{cracks in a Victorian viaduct|a landslip beside the track|serious corrosion in a tunnel lining} on [DAY]. Replacement buses will run on the route until further <c>notice, adding up to [#30-70] minutes to journey <c>times. The operator apologised to customers and said that <m>{repairs would begin as soon as possible|a full inspection was under way|it was too early to say when services would resume}. Commuters described the news as <m>{\"the last straw\"|\"a nightmare\"|\"deeply frustrating\"}, and local business leaders warned that <o>"),
    (4, "Bus drivers in [TOWN] will strike for {two|three|four} days next week in a dispute over <c>{pay|working hours|pay and conditions}, their union has confirmed. Talks between the union and the operator, [CO] Transport, broke down on [DAY] without <c>agreement. <o>"),
    (3, "A new bypass around [TOWN] opened to traffic on [DAY], {three|five|seven|nine} years after it was first <c>proposed and [#6-18] months later than planned. The [#4-9]-kilometre road is expected to take thousands of lorries a day out of the town <c>centre, and shopkeepers on the high street said they were looking forward to <m>cleaner air and quieter streets. However, environmental campaigners, who had fought the scheme in the courts, said it would <m>{encourage more driving|destroy valuable wildlife habitat|do little to reduce congestion in the long term}. <o>"),
    (4, "Flights at [TOWN] airport were {delayed|suspended|grounded} for several hours on [DAY] after <m>{a computer failure affected air traffic control|fog settled over the runway|a suspicious package was found in the terminal|a bird strike damaged an arriving aircraft}. An airport spokesperson said <o>"),
    (4, "The {northbound|southbound|eastbound|westbound} carriageway of the main road through [TOWN] was closed for {four|five|six|seven|eight} hours on [DAY] after <m>a lorry {overturned|shed its load|caught fire}, spilling <m>{fuel|gravel|timber|frozen food} across the road. No one was <c>seriously injured. <o>"),
    (4, "From [MONTH], passengers on [TOWN]'s tram network will be able to pay <m>{with a contactless card|using their phones|with a single daily ticket valid on buses as well}, the transport authority said. Fares will be capped at [#4-9] {pounds|dollars|euros} a <c>day. <o>"),
    (3, "Ferry services between [TOWN] and the island of [TOWN2] were suspended on [DAY] because of <c>{high winds|rough seas|a mechanical fault}. Islanders have criticised the operator for <m>repeated cancellations this winter, saying they have been left without <m>{deliveries of fresh food|access to hospital appointments|a reliable way to get to work}. <o>"),
]

# News, part 8: culture and community.
NEWS += [
    (4, "The [TOWN] {@m:Museum|Gallery|Art Centre} will reopen to the public on [DAY2] after a {two|three|four}-year <c>refurbishment costing [#6-19] million. The building now has <m>{a new glass roof over its central hall|twice as much exhibition space|a rooftop cafe and a learning centre for schools}, and its collection of <m>{local pottery|maritime paintings|Bronze Age tools|textiles from the town's mills} will be shown together for the first <c>time. Director [PERSON] said the aim was to <m>make the {@m:museum|gallery|centre} \"a place that belongs to everyone\". Entry will remain <c>free. <o>"),
    (4, "The novelist [PERSON], who grew up in [TOWN], has won this year's {Harrowgate|Lantern|Meridian} Prize for fiction for {[HIS]|the} novel <m>{The Salt Road|A House of Small Hours|Winter Ledger|The Glassmaker's Daughter}, which tells the story of <m>{a family of fishermen over three generations|a librarian who discovers a hidden archive|two sisters separated by a flood|a young engineer building a bridge}. The judges described the book as <o>"),
    (4, "Tickets for the [TOWN] {Folk|Jazz|Summer|Literary} Festival sold out within {two|three|four|six} hours of going on <c>sale on [DAY], organisers said. This year's programme includes <m>more than [#4-9]0 events over {three|four|five} <c>days, <o>"),
    (4, "A {mural|statue|memorial bench|sculpture} honouring <m>{the town's nurses|the women who worked in [TOWN]'s wartime factories|a local footballer|the fishermen lost at sea} was unveiled in [TOWN] on [DAY2] in front of a crowd of several <c>hundred people. <o>"),
    (4, "The [TOWN] Theatre has cancelled the remaining performances of its {autumn|spring|Christmas} production after <m>{a fire in the lighting rig|a leak in the roof damaged the stage|the lead actor was injured}. Ticket holders will be offered a full <c>refund. <o>"),
    (4, "A {medieval|Roman|Bronze Age|Viking} {coin hoard|burial site|timber building|boat} has been uncovered during <m>{construction work|the digging of a new drainage ditch|an excavation by local volunteers} on the edge of [TOWN]. Archaeologists from the University of [TOWN2] said the find could <m>{change our understanding of the area's history|be one of the most important in the region for decades|shed light on early trade routes}. The site has been <m>{covered over to protect it|fenced off|opened to visitors for one weekend}, and the finds will be <m>{studied and cleaned|taken to the county museum|examined by specialists} before <o>"),
    (3, "Choir members in [TOWN] have raised more than [#12-48],000 for the local hospice by singing for [#24-48] hours <c>non-stop. <o>"),
    (4, "The {annual|traditional} [TOWN] {cheese rolling contest|boat race|lantern parade|agricultural show} will go ahead this year despite <m>{concerns about the weather|a shortage of volunteers|rising insurance costs}, organisers confirmed on [DAY]. The event, which dates back to <m>{the nineteenth century|the 1920s|at least 1850}, usually attracts around [#5-20],000 <c>visitors. <o>"),
]

# News, part 9: longer reports (environment, housing, farming, emergencies).
NEWS += [
    (3, "[TOWNU], [MONTH] [#2-28] (Wire) - Thousands of fish have died along a [#3-9]-kilometre stretch of the River [RIVER] below [TOWN], and environmental officials are investigating whether <m>{a leak from a nearby industrial site|sewage released during heavy rain|runoff from farmland} is to blame. Anglers first noticed dead {trout|roach and perch|eels} floating near the town's weir early on [DAY], and by the afternoon the water had turned {a murky brown|a milky grey|an unusual green}. The [REGION] environment agency has taken samples and said results would be available <m>{within days|by the end of the week|early next week}. Local angling club secretary [PERSON] said the stretch had taken <m>years to recover from a previous incident and that members were <m>\"heartbroken\". The agency urged people to keep <c>dogs out of the water until further <c>notice. <o>"),
    (3, "Average house prices in [TOWN] have risen by [#9-22] per cent in two years, pushing home ownership out of reach for many young families, according to a report published on [DAY] by a local housing charity. The report found that a typical home now costs more than <m>{ten|eleven|twelve} times the average local salary, and that rents have risen almost as <c>fast. It calls on the council to <m>{build more social housing|limit the number of holiday lets|bring empty homes back into use} and on the government to <m>{provide more funding|change planning rules|support first-time buyers}. Responding to the report, a council spokesperson said the authority was <m>\"fully aware of the pressures\" and had already <o>"),
    (3, "Farmers in the [REGION] region say this year's {wheat|barley|potato|apple} harvest is likely to be one of the worst in a <c>decade after <m>{a wet spring followed by a summer drought|late frosts and a cold, grey summer|weeks of heavy rain at harvest time}. Yields on some farms are down by as much as [#20-45] per <c>cent, and prices for <m>{flour|animal feed|fresh produce} are expected to rise. [PERSON], who farms [#120-600] hectares near [TOWN], said [HE] had never seen <m>a season like it in [#20-40] years of farming. \"We plan for bad years,\" [HE] said, \"but <o>"),
    (3, "Firefighters spent more than {six|seven|eight|ten|twelve} hours tackling a large blaze at a {warehouse|recycling centre|disused mill} on the [TOWN] industrial estate overnight. At its height, [#40-90] firefighters and [#8-15] fire engines were at the <c>scene, and a thick plume of smoke could be seen from several kilometres <c>away. Residents living nearby were told to keep their windows and doors <c>closed. Nobody was <c>hurt. The cause of the fire is not yet known, and an investigation will begin <m>once the site has been made safe. The building's owner, [CO] Storage, said it was <m>{working closely with the fire service|too early to estimate the cost of the damage|grateful to the emergency crews}. <o>"),
    (3, "OBITUARY: [PERSON], who has died aged [#79-98], spent more than [#30-50] years as the {@o:head teacher|family doctor|vet|choir master} in [TOWN], and was known to generations of local families. Born in [TOWN2], [PERSON_L] moved to the town as a young {@o:teacher|doctor|vet|music graduate} and never <c>left. Former colleagues remembered [HIS] <m>{patience|sense of humour|tireless energy} and [HIS] habit of <m>{cycling everywhere, whatever the weather|learning the name of every child in the town|writing letters to the local paper}. Outside work, [HE] was a keen <m>{gardener|amateur astronomer|hill walker and birdwatcher}. [HEC] is survived by <o>"),
    (3, "Plans for a [#12-40]-turbine wind farm {in the hills above|on moorland above|off the coast near} [TOWN] have been approved by the regional planning authority after a <m>{two-year|lengthy|bitterly contested} process. Supporters say the project will generate enough electricity to power around [#30-90],000 <c>homes and bring much-needed investment to the area, including a community fund worth [#1-4]00,000 a year. Opponents, including a group of residents and a {bird conservation charity|local walkers' association|tourism body}, argued that the turbines would <m>{spoil one of the region's finest landscapes|harm populations of rare birds|damage the local tourist trade}. The developer, [CO] Renewables, said construction would begin <m>next year and that the turbines could be generating power <o>"),
    (3, "Inspectors have rated [TOWN] {Academy|High School|Community College} as <m>{@q:inadequate|requiring improvement|outstanding}, in a report published on [DAY]. The report praised <m>{the quality of teaching in science and mathematics|the school's support for pupils with special needs|the wide range of after-school clubs} but said that <m>{@q:attendance remained far too low|leaders had not acted quickly enough on earlier advice|a small number of pupils still missed too many lessons}. Head teacher [PERSON] said the school {@q:accepted the findings|had already begun to make changes|was delighted with the result} and would <m>continue to work closely with parents. In a letter sent home to families on [DAY], [HE] wrote: <o>"),
    (3, "Nurses at [TOWN] General Hospital will stage a {24|48}-hour walkout next [DAY] after talks over <m>{staffing levels|pay|night-shift allowances} failed to reach an <c>agreement. The union said emergency care and <m>cancer treatment would not be affected, but that {hundreds of|dozens of} routine appointments would have to be <c>rescheduled. Hospital managers said they were <m>\"disappointed\" by the decision and urged the union to return to the negotiating <c>table. It will be the {first|second|third} strike at the hospital this year. A rally is planned outside the main entrance on the morning of the <o>"),
    (3, "[CO] Technologies, a start-up founded {three|four|five} years ago by two graduates of the University of [TOWN], has unveiled a <m>{low-cost water filter that runs without electricity|sensor that warns farmers when crops need watering|hearing aid that can be charged by sunlight}. The company says the device will go on sale <m>{early next year|in the autumn|within eighteen months} at a price of around [#20-90] {pounds|dollars|euros}. Co-founder [PERSON] said the idea came from <m>{a summer spent working on a farm|a university engineering project|watching a relative struggle with an expensive device}. The firm has raised [#2-9] million from investors and plans to <m>{double its staff to fifty by the end of the year|open a factory in [TOWN2]|sell the device abroad}. <o>"),
    (3, "A [#13-16]-year-old {boy|girl} from [TOWN] has been praised for <m>{saving a younger child from drowning|calling an ambulance and performing first aid on a neighbour|alerting residents to a house fire} on [DAY2] evening. Emergency services said the teenager's quick thinking had <m>{almost certainly saved a life|prevented a tragedy|made all the difference}. <o>"),
    (3, "The number of visitors to [TOWN]'s {coastal path|national park|historic town centre} rose to a record [#2-9]00,000 last year, according to figures released on [DAY]. Local businesses have welcomed the growth, but residents complain of <m>{overcrowded car parks|litter on the beaches|traffic jams on narrow lanes} during the summer <c>months. The council is now considering <m>{a tourist tax|a park-and-ride scheme|limits on the number of coaches}, and a public consultation will open <m>next month. [PERSON], who runs a {cafe|guest house|bike hire shop} in the town, said: \"We need the visitors, but <o>"),
    (3, "CORRECTION: An article published on [DAY] about <m>{the [TOWN] bypass|plans for a new school in [TOWN]|the [TOWN] council budget} incorrectly stated that <o>"),
]
