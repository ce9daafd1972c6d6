"""Prompt generator for the "fiction" and "qa" sources.

All text is original. Fiction prompts are short passages composed from
genre-specific fragments (mystery, fantasy, romance, science fiction, literary,
children's, plus a few horror/adventure pieces) arranged by many different
frames: plain narration, dialogue exchanges, chapter openings, diaries,
letters, captain's logs, case notes, fairy-tale openings and so on. Sentences
are written in the past tense with pronoun slots so the same fragment can be
rendered in first or third person.

QA prompts are built from a hand-written bank of general-knowledge facts
(science, history, geography, language, arts, everyday knowledge), each with a
question, a short answer, a declarative statement, distractors and a short
explanation in our own words, rendered through many question-answer formats.

Every frame declares the expected next-token uncertainty of its ending
("c" near-certain, "m" medium, "o" wide open); generation rotates through the
three classes so each source has roughly a third of each. Only
``random.Random(SEED)`` is used, so ``generate()`` is deterministic.
"""

from __future__ import annotations

import random
import re

SEED = 90517
TARGET = 240  # per source; the brief asks for at least 230

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text.strip().lower())


def _words(text: str) -> int:
    return len(text.split())


def _clean(text: str) -> str:
    # collapse spaces inside lines, keep newlines, strip ends
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n")]
    out = "\n".join(lines).strip()
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out


# ===========================================================================
# FICTION
# ===========================================================================
#
# Fragment markup (past tense, so "I was" / "she was" both agree):
#   {N} subject: a character's name, or "I" in first person
#   {S} / {s} subject pronoun capitalised / lower ("She"/"she" or "I"/"I")
#   {o} object pronoun ("her"/"me"), {p}/{P} possessive ("her"/"my")
#   {r} reflexive ("herself"/"myself")
#   {X} a second character's name, {Y} a third
#   {L} a place of the genre

GENRES: dict[str, dict] = {}

GENRES["mystery"] = dict(
    heroes=[("Rosa Quill", "f"), ("Amos Hale", "m"), ("Nell Ashby", "f"),
            ("Inspector Varley", "m"), ("Detective Okafor", "f"), ("Jonah Creel", "m")],
    others=["the butler", "Mrs. Pettigrew", "Constable Dunn", "Lord Ashcombe",
            "the housekeeper", "Dr. Varga", "the night porter", "Miss Linden"],
    places=["the manor", "the harbour office", "the old rectory", "the hotel on Fenwick Street",
            "the railway station", "the locked library", "the fog-bound pier"],
    titles=["The Third Key", "A Quiet Poisoning", "The Man Who Kept the Clocks",
            "Ashes in the Grate", "The Late Train from Harwick", "What the Gardener Saw"],
    open=[
        "The body was found at half past six, face down in the rose beds behind {L}.",
        "Nobody at {L} admitted to hearing the shot, which was the first lie of the evening.",
        "{N} arrived at {L} just as the rain turned from a drizzle into something meaner.",
        "The telegram reached {N} on a Tuesday, and by Wednesday {s} was standing outside {L}.",
        "Three people had keys to the study, and one of them was already dead.",
        "{N} had been retired for exactly four days when the phone rang.",
    ],
    desc=[
        "The study smelled of pipe smoke and spilled brandy.",
        "A single glove lay on the carpet, still damp from the garden.",
        "The clock on the mantel had stopped at twenty past eleven.",
        "Mud had been wiped from the window sill, but not quite well enough.",
        "The curtains were drawn, though the lamp beside the desk was still warm.",
        "Every drawer in the bureau had been pulled out and put back in the wrong order.",
        "Somewhere below, a tap dripped with the patience of a metronome.",
        "The guests had gathered in the drawing room, and none of them looked at each other.",
    ],
    act=[
        "{N} knelt beside the fireplace and sifted through the ashes with a pencil.",
        "{S} turned the teacup over and studied the faint ring at its base.",
        "{N} made a note in {p} little black book and said nothing.",
        "{S} counted the steps from the door to the desk, then counted them again.",
        "{N} held the letter up to the lamp, looking for the watermark.",
        "{S} asked {X} about the hour between ten and eleven, and watched the answer arrive too quickly.",
        "{N} slipped the brass key into {p} pocket before anyone noticed it.",
    ],
    say=[
        "Nobody leaves this house until I say so",
        "You said you were asleep by ten. Your candle says otherwise",
        "The dog didn't bark, and that bothers me",
        "I never touched the decanter, I swear it",
        "Who else knew about the will?",
        "Someone in this room is lying, and I intend to find out who",
        "The window was locked from the inside",
        "He owed money to half the county",
    ],
    c=[
        "{N} dusted the brandy glass for finger",
        "\"You have the right to remain",
        "The constable snapped the handcuffs around {X}'s",
        "{S} had seen this kind of thing before, and it never ended well. {S} let out a long",
        "The killer, {s} realised, had been in plain",
    ],
    m=[
        "The fingerprints on the glass belonged to",
        "The only person without an alibi was",
        "{S} opened the safe and found nothing inside except a",
        "{X} went pale and whispered that the real heir was",
        "According to the porter, the last person to see the victim alive was",
    ],
    o=[
        "{S} knew then who had done it. There was just one problem:",
        "The next morning, a second body was found.",
        "{X} lit a cigarette and began to explain.",
        "It was time to gather everyone in the drawing room.",
    ],
)

GENRES["fantasy"] = dict(
    heroes=[("Elowen", "f"), ("Tamsin Reed", "f"), ("Corvin", "m"), ("Brannoch", "m"),
            ("Ysolde", "f"), ("Perrin Ashwood", "m")],
    others=["the old wizard", "Queen Maelis", "the ferryman", "a hooded stranger",
            "the dwarf smith Durgan", "the river spirit", "Captain Thorne", "the witch of the fens"],
    places=["the Thornwood", "the tower of Caer Morrow", "the salt marshes", "the city of Velloran",
            "the mountain pass", "the sunken temple", "the king's hall"],
    titles=["The Ember Crown", "Song of the Salt Marsh", "The Last Gate of Velloran",
            "A Map of Broken Stars", "The Witch's Apprentice", "Where the Ravens Gather"],
    open=[
        "In the last days of the old kingdom, when the moon still had two faces, {N} was born in {L}.",
        "The dragons had been gone for three hundred years, and most people had stopped looking up.",
        "{N} was eleven years old the first time the river spoke to {o}.",
        "They said no one who entered {L} after dark ever came out the same.",
        "The prophecy was very specific about the day, and very vague about everything else.",
        "Nobody in the village knew that the blacksmith's daughter could set fire to water.",
    ],
    desc=[
        "Lanterns hung from the branches like fruit, glowing a soft and sickly green.",
        "The air tasted of iron and old rain.",
        "Far below, the river wound through the valley like a silver thread.",
        "Runes had been carved into every stone of the archway, and some of them were still warm.",
        "The hall was so quiet that the crackle of the torches sounded like applause.",
        "Mist rolled down from the peaks and swallowed the road behind them.",
        "A raven watched from the gatepost with eyes that were far too clever.",
    ],
    act=[
        "{N} pressed {p} palm against the door and felt it hum.",
        "{S} drew the map from {p} satchel and spread it across a flat rock.",
        "{N} whispered the word {X} had taught {o}, and the candle flared blue.",
        "{S} shouldered {p} pack and started up the mountain path.",
        "{N} traded {p} last silver coin for a ride across the black water.",
        "{S} climbed the spiral stair, counting each step under {p} breath.",
        "{N} knelt before the throne, though every part of {o} wanted to run.",
    ],
    say=[
        "Magic always asks for something in return",
        "The gate will only open for the rightful heir",
        "Do you know what you are carrying?",
        "Stay on the path, whatever you hear",
        "The dragons are not gone. They are sleeping",
        "I have waited a very long time for you",
        "Cross the river before moonrise, or do not cross it at all",
    ],
    c=[
        "{X} drew a long silver sword from its",
        "The dragon lifted its head and spread its enormous leathery",
        "The wizard raised his gnarled oak",
        "{S} mounted {p} horse, took the reins, and rode off into the setting",
        "With a flash of light and a puff of",
    ],
    m=[
        "In the centre of the chamber, on a pedestal of black stone, lay a",
        "The only way to break the curse was to",
        "{X} handed {o} a small leather pouch and told {o} to",
        "The prophecy spoke of a child born under",
        "Beyond the gate stretched a land where",
    ],
    o=[
        "And so the journey began.",
        "{S} stepped through the archway and",
        "That was when the mountain began to move.",
        "The old stories had been wrong about one thing:",
    ],
)

GENRES["romance"] = dict(
    heroes=[("Clara Benning", "f"), ("Juliet Moss", "f"), ("Daniel Reyes", "m"),
            ("Priya Nair", "f"), ("Theo Lindqvist", "m"), ("Hannah Cole", "f")],
    others=["Marcus", "Sophie", "the new vet", "Oliver Grant", "Bea",
            "the baker from across the street", "Luca", "Eleanor"],
    places=["the little bookshop on Harbour Lane", "the vineyard", "the wedding reception",
            "the airport lounge", "the seaside cottage", "the cafe by the station"],
    titles=["Second Chances at Hollow Creek", "The Summer We Met", "Letters to Nobody",
            "A Table for Two", "Snowed In", "The Wedding Planner's Mistake"],
    open=[
        "{N} had sworn off love the summer {s} turned thirty, and for almost a year it worked.",
        "The first time {N} saw {X}, {s} was holding a ladder and a grudge.",
        "It was supposed to be a quiet week at {L}.",
        "{N} had exactly one rule about dating coworkers, and {s} broke it on a Thursday.",
        "Of all the places to run into an ex, {L} was the worst.",
        "{N} came back to {L} for the funeral and stayed for reasons {s} refused to name.",
    ],
    desc=[
        "Rain streaked the windows, and the whole room smelled of coffee and old paper.",
        "Fairy lights hung across the terrace, and somewhere a band was playing something slow.",
        "The sunset turned the water the colour of peaches.",
        "The kitchen was warm and cluttered, with flour on every surface.",
        "Snow had been falling since noon, and the road out of town had disappeared.",
        "The dance floor was crowded, but for a moment it felt like there was no one else in the room.",
    ],
    act=[
        "{N} tucked a strand of hair behind {p} ear and pretended to read the menu.",
        "{S} laughed before {s} could stop {r}.",
        "{N} reached for the same book as {X}, and their fingers touched.",
        "{S} checked {p} phone for the tenth time that hour.",
        "{N} stood on the doorstep for a full minute before knocking.",
        "{S} rehearsed the speech all the way there and forgot every word of it.",
    ],
    say=[
        "I wasn't expecting to see you here",
        "Are you always this stubborn, or is it just with me?",
        "You still take your coffee with too much sugar",
        "Stay. Just for tonight",
        "I think I've been in love with you since the day we met",
        "We agreed this was a bad idea",
        "Dance with me",
    ],
    c=[
        "{X} reached into a jacket pocket, pulled out a small velvet box, and got down on one",
        "{S} felt {p} cheeks turn bright",
        "Everyone said it was love at first",
        "{S} had butterflies in {p}",
        "They kissed as the clock struck",
    ],
    m=[
        "{S} opened the note. It said only:",
        "For the first time in years, {s} felt",
        "{X} smiled that crooked smile and asked if {s} wanted to",
        "The last person {s} expected to see at the door was",
        "{S} realised, with a sinking feeling, that {s} was falling for",
    ],
    o=[
        "{S} took a breath and said the one thing {s} had never said to anyone.",
        "Later, {s} would tell people it started with a spilled coffee.",
        "Then {X} leaned closer and",
        "There was only one thing left to do.",
    ],
)

GENRES["scifi"] = dict(
    heroes=[("Commander Imani Sato", "f"), ("Dr. Lena Vos", "f"), ("Kai Mercer", "m"),
            ("Pilot Anders Ruhl", "m"), ("Zara Okonjo", "f"), ("Ezra Calloway", "m")],
    others=["the ship's computer", "Lieutenant Park", "the android KE-7", "Chief Engineer Moreau",
            "Mission Control", "the alien envoy", "Dr. Hollis"],
    places=["the research station on Europa", "the colony ship Perseverance",
            "the outer ring of the habitat", "the cargo bay", "the bridge", "the dust plains of Kepler-22b"],
    titles=["The Long Dark Between", "Signal from Tau Ceti", "Station Eleven-B",
            "The Last Colony Ship", "Red Dust", "Echoes in Orbit"],
    open=[
        "The signal arrived at 0342 ship time, and it was not in any human language.",
        "{N} woke from cryosleep forty years early, and the ship was silent.",
        "On Mars, the dust storms lasted for months, and {N} had stopped counting the days.",
        "Earth had been a rumour for three generations aboard {L}.",
        "The android had been offline for a decade when {N} found it in the scrapyard.",
        "The first rule of deep space salvage was simple: never open a sealed door.",
    ],
    desc=[
        "Through the viewport, the gas giant filled half the sky with bands of orange and cream.",
        "Warning lights pulsed red along the corridor, silent and insistent.",
        "The hull groaned as the ship slipped deeper into the planet's gravity well.",
        "Frost had formed on the inside of the visor.",
        "The hydroponics bay smelled of wet soil and recycled air.",
        "Somewhere beyond the station, a dead satellite tumbled end over end.",
    ],
    act=[
        "{N} ran a diagnostic, then ran it again, not trusting the first result.",
        "{S} sealed {p} helmet and stepped into the airlock.",
        "{N} rerouted auxiliary power to the shields with seconds to spare.",
        "{S} keyed the comm and waited for a reply that did not come.",
        "{N} floated down the corridor, pulling {r} along the handrails.",
        "{S} pulled up the star charts and traced the route with one gloved finger.",
    ],
    say=[
        "Oxygen reserves at twelve percent and falling",
        "That ship has been dead for two hundred years. So who is flying it?",
        "We are not alone out here",
        "Hull breach on deck four. Sealing bulkheads now",
        "I am sorry, Commander. I cannot allow that",
        "Permission to come aboard?",
        "Whatever you do, don't touch the artifact",
    ],
    c=[
        "The countdown echoed through the launch bay: ten, nine, eight, seven, six, five, four, three, two,",
        "{S} pushed the throttle forward and the ship jumped to light",
        "{S} strapped {r} into the pilot's",
        "The astronauts floated weightlessly in zero",
        "With a hiss, the airlock door slid",
    ],
    m=[
        "The readings showed that the planet's atmosphere was mostly",
        "At the centre of the crater sat a structure made of",
        "The message, once decoded, said:",
        "{X} reported that the alien ship was",
        "The colony had been abandoned because",
    ],
    o=[
        "Then the lights went out.",
        "{S} opened the hatch and",
        "Captain's log, supplemental.",
        "Nobody spoke for a long time.",
    ],
)

GENRES["literary"] = dict(
    heroes=[("Margaret", "f"), ("Walter Kinsella", "m"), ("Ada", "f"), ("Samuel", "m"),
            ("Ruth Okafor", "f"), ("Tomas", "m")],
    others=["Mother", "Frank", "the neighbour", "Aunt Vera", "the boy next door",
            "the priest", "an old friend from school"],
    places=["the farmhouse", "the flat above the laundrette", "the hospital corridor",
            "the town where nothing ever changed", "the kitchen", "the empty house on Alder Road"],
    titles=["The Weight of Small Things", "What We Kept", "Winter Light", "The Orchard",
            "A Year of Sundays", "Salt and Water"],
    open=[
        "The summer my father stopped speaking, the river dried up to a trickle.",
        "{N} had lived in {L} for forty years and had never once painted the door.",
        "Every Sunday, {N} set the table for two, though {s} had been eating alone since March.",
        "There are some mornings you remember for the rest of your life, and most of them begin ordinarily.",
        "{N} found the letters in a shoebox at the back of the wardrobe, tied with kitchen string.",
        "It was the year the mill closed, and the whole town seemed to hold its breath.",
    ],
    desc=[
        "The light came in low and yellow across the linoleum.",
        "Outside, the fields lay brown and patient under a sky the colour of dishwater.",
        "The radio murmured in the next room, a voice reading the shipping forecast to no one.",
        "The wallpaper had faded everywhere except where the pictures used to hang.",
        "Dust hung in the air like something that had forgotten how to settle.",
        "The kettle ticked as it cooled.",
        "A dog barked twice somewhere down the lane, then thought better of it.",
    ],
    act=[
        "{N} folded the tea towel into a neat square and set it on the counter.",
        "{S} stood at the window for a long time, not really looking at anything.",
        "{N} picked up the phone, listened to the dial tone, and put it down again.",
        "{S} walked the long way home so {s} would not have to pass the school.",
        "{N} ran {p} thumb along the crack in the cup, the one {s} had never mended.",
        "{S} wrote the first line of the letter four times and tore it up four times.",
    ],
    say=[
        "You always did make things harder than they needed to be",
        "I'm not angry. I'm just tired",
        "Do you remember the winter the pipes froze?",
        "Some things you don't get to take back",
        "She would have liked this, you know",
        "We should have sold the place years ago",
    ],
    c=[
        "The whole house smelled of freshly baked",
        "{S} had not been back since the day of {p} mother's",
        "{S} sat at the kitchen table and poured {r} another cup of",
        "The years, {s} thought, had gone by in the blink of an",
        "{S} turned off the lamp and lay awake until the birds began to",
    ],
    m=[
        "What {s} remembered most about that summer was",
        "It occurred to {o}, not for the first time, that",
        "{X} had always said that grief was",
        "In the bottom of the box, beneath the photographs, was",
        "{S} wondered whether {X} had ever",
    ],
    o=[
        "Nothing happened for a while.",
        "{S} thought about that for a long time afterwards.",
        "Years later, {s} would remember",
        "And still,",
    ],
)

GENRES["children"] = dict(
    heroes=[("Pip the mouse", "m"), ("Lily", "f"), ("Benny the bear", "m"), ("Rosie", "f"),
            ("Max", "m"), ("Little Owl", "f")],
    others=["Grandma Hen", "a friendly frog", "Mr. Badger", "the wise old tortoise",
            "Toby", "the baby elephant", "a very hungry crocodile"],
    places=["a cosy burrow under the oak tree", "the big green meadow", "the bottom of the garden",
            "a little house by the sea", "the enchanted forest", "the top of the hill"],
    titles=["Pip and the Big Red Balloon", "The Bear Who Couldn't Sleep", "Rosie's Rainy Day",
            "Max Goes to the Moon", "The Kindest Crocodile", "Where Did the Stars Go?"],
    open=[
        "Once upon a time, in {L}, there lived a small and curious creature called {N}.",
        "{N} was the smallest in the whole class, but {s} had the biggest ideas.",
        "It was the first day of spring, and {N} could not wait to go outside.",
        "Every night, {N} looked out of the window and said good night to the moon.",
        "{N} had a red boot, a yellow boot, and a very muddy puddle.",
        "One morning, {N} found a tiny golden egg at {L}.",
    ],
    desc=[
        "The sun was warm and the flowers were nodding their heads.",
        "The sky was full of fluffy white clouds shaped like sheep.",
        "It was a very big forest, and it was very, very dark.",
        "The birds were singing, the bees were buzzing, and the river went splish, splash, splosh.",
        "There were apples and pears and cherries and plums, more than anyone could count.",
    ],
    act=[
        "{N} looked up. {S} looked down. {S} looked all around.",
        "{S} hopped, skipped and jumped all the way down the lane.",
        "{N} knocked on the door. Knock, knock, knock!",
        "{S} tiptoed past the sleeping dog, very quietly.",
        "{N} shared {p} sandwich with {X}, because that is what friends do.",
        "{S} climbed up, up, up to the very top of the tree.",
    ],
    say=[
        "Will you be my friend?",
        "Who is that knocking on my door?",
        "I'm not scared. Well, maybe just a little bit",
        "Let's go on an adventure!",
        "That's not fair!",
        "Can I come too?",
    ],
    c=[
        "And they all lived happily ever",
        "{N} was so tired that {s} yawned a great big",
        "\"Twinkle, twinkle, little",
        "\"Good night,\" said {X}. \"Sleep",
        "\"Are we there",
    ],
    m=[
        "{N} opened the box, and inside there was a",
        "\"Let's play a game,\" said {X}. \"Let's play",
        "When {s} got to the top of the hill, {s} saw",
        "{X} said the best thing about rainy days was",
        "For breakfast, {N} had",
    ],
    o=[
        "And do you know what happened next?",
        "Then, all of a sudden,",
        "So {N} had an idea.",
        "But that is a story for another day.",
    ],
)

GENRES["adventure"] = dict(
    heroes=[("Jack Harlow", "m"), ("Maya Torres", "f"), ("Sully", "m"), ("Greta Lind", "f"),
            ("Cass", "f"), ("Abel Winters", "m")],
    others=["the guide", "the old sailor", "Nate", "the stranger at the bar",
            "the sheriff", "Captain Morrow"],
    places=["the jungle", "the frozen north", "the old mine", "the abandoned lighthouse",
            "the desert canyon", "the ship's hold"],
    titles=["The Lighthouse at World's End", "Gold in the Canyon", "The Long Winter Road",
            "Beneath the Black Hills", "The Night Watch", "Storm Season"],
    open=[
        "The storm hit the lighthouse a little after midnight, and the lamp went out with it.",
        "{N} had three days of water, a broken compass, and a map drawn on a napkin.",
        "Nobody had been down the old mine shaft since the collapse of 1911.",
        "The dogs started howling an hour before the wolves came.",
        "{N} stepped off the train into a town that did not appear on any map.",
    ],
    desc=[
        "The wind screamed through the gaps in the boards.",
        "The canyon walls glowed red in the last of the light.",
        "Ice cracked somewhere out on the lake with a sound like a gunshot.",
        "Something moved in the long grass, then went still.",
        "The only light came from a lantern swinging on a hook by the door.",
    ],
    act=[
        "{N} checked the rifle, then checked it again.",
        "{S} tied the rope around {p} waist and lowered {r} into the dark.",
        "{N} pressed {p} back to the wall and listened.",
        "{S} lit the last match and shielded it with {p} hand.",
        "{N} cut the line and let the boat drift into the current.",
    ],
    say=[
        "We need to be off this mountain before dark",
        "Did you hear that?",
        "Don't move. Don't even breathe",
        "Whatever's down there has been waiting a long time",
        "This town isn't safe for strangers",
    ],
    c=[
        "{S} ran as fast as {p} legs could",
        "{S} held {p}",
        "The floorboards creaked, and {s} froze, the hair on the back of {p} neck standing on",
        "Soaked to the skin and shivering from head to",
        "{S} heard slow, heavy footsteps coming up the",
    ],
    m=[
        "At the bottom of the shaft, {s} found",
        "The footprints in the snow led to",
        "{X} pointed at the horizon, where",
        "The only way out was",
    ],
    o=[
        "{S} opened the door and",
        "Then the screaming started.",
        "That was the last anyone saw of {X}.",
        "Something was waiting in the dark:",
    ],
)

# Genre-neutral endings, by expected next-token uncertainty.
GEN_END = dict(
    c=[
        "{S} took a deep",
        "{S} shook {p}",
        "{S} raised an",
        "{S} cleared {p}",
        "There was a knock at the",
        "{S} let out a long sigh of",
        "For a long moment, neither of them said a single",
        "{S} waited for what felt like an",
        "{S} couldn't believe {p} own",
        "{S} shrugged {p}",
        "{S} rolled {p}",
        "The phone rang. {S} picked it up and said, \"",
        "{S} bit {p}",
        "It was raining cats and",
        "{S} stepped inside and closed the door behind",
    ],
    m=[
        "{S} reached into {p} pocket and pulled out a",
        "{S} turned to {X} and",
        "The letter was from",
        "{S} decided that the only thing to do was",
        "Inside the envelope was a",
        "{X} looked at {o} as if",
        "The door creaked open, revealing",
        "{S} had never seen so many",
        "The last thing {s} remembered was",
        "{S} ran toward the",
        "It was the kind of day that",
        "{X} was wearing a",
    ],
    o=[
        "{S} opened the door and",
        "Then,",
        "Suddenly,",
        "In the next chapter,",
        "Meanwhile,",
        "The next morning,",
        "{X} said, \"",
        "{S} said:",
        "But",
        "It began like this:",
        "And then",
    ],
)

SECOND_PERSON = [
    "You wake up on a cold stone floor with no memory of how you got there.",
    "You have been walking for hours, and the road has not changed.",
    "The door in front of you is painted a red so dark it is almost black.",
    "You reach for your phone, but the screen stays dark.",
    "Somebody has left a candle burning on the table, and you are sure it was not you.",
    "Your name is called, and you turn, but the hallway is empty.",
    "You count the coins in your hand: four, not enough for the ferry.",
    "The letter in your pocket is addressed to you, in your own handwriting.",
]
SECOND_END = dict(
    c=["You take a deep", "Your heart begins to pound in your", "You pinch yourself to make sure you are not"],
    m=["You decide to", "On the table in front of you is a", "The only way forward is"],
    o=["You open the door and", "What do you do?", "Then you hear it:"],
)

EPIGRAPHS = [
    ("Every map is a kind of promise, and most of them are broken.", "Old sailors' saying"),
    ("We do not remember days; we remember doors.", "from the notebooks of Ilse Marrow"),
    ("The truth is a guest who always arrives late.", "proverb of the river towns"),
    ("Be careful what you carry. It may be carrying you.", "The Book of Small Hours"),
    ("Home is the place that keeps your shape after you leave it.", "Anna Keld, Winter Letters"),
    ("Nothing is lost. It is only waiting to be found by the wrong person.", "Inspector's handbook, 1899"),
]

RECAPS = [
    "Previously: the letter arrived, the house was sold, and nobody told {X}.",
    "Previously: {N} escaped {L}, but not without losing something important.",
    "Last time: a door that should not exist, and a key that fit it perfectly.",
    "Previously: a promise was made at {L}, and {X} intends to see it kept.",
]

NUM_WORDS = ["One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
             "Eleven", "Twelve", "Fourteen", "Seventeen", "Twenty", "Twenty-Three"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "March", "April", "June", "July", "September", "October", "November"]
TIME_HEADERS = ["Twenty years earlier", "The night before", "Three weeks later", "Much later",
                "That same evening", "Seven years ago", "Before the war", "The following spring"]
SAY_VERBS = ["said", "said", "said", "whispered", "muttered", "replied", "called", "snapped", "admitted"]
AUTHORS = ["E. M. Harwood", "Lucy Fenn", "R. J. Okoye", "Tobias Marsh", "Ingrid Sole", "Dana Whitlock"]

GENRE_LABEL = dict(mystery="mystery", fantasy="fantasy", romance="romance", scifi="science fiction",
                   literary="literary", children="children's", adventure="adventure")
DIARY_OPEN = [
    "Something strange happened today.",
    "I couldn't sleep again last night, so I am writing this by torchlight.",
    "I have to write this down before I forget how it felt.",
    "Nobody believes me, so I am telling you instead.",
    "It has been a week since I last wrote, and a lot has changed.",
]
LETTER_OPEN = [
    "I don't know how to begin this letter, so I will simply begin.",
    "I am writing to you from {L}, where the days are long and the nights are longer.",
    "By the time you read this, I will be gone from {L}.",
    "You asked me once what really happened at {L}. Here it is, as best I can tell it.",
    "Forgive the handwriting. My hands have not stopped shaking since yesterday.",
]
STORYTELLER_OPEN = [
    "I'll tell you how it happened, because nobody else will tell it right.",
    "Let me tell you about {L}, and about the year everything changed.",
    "People still ask me about that night. This is the first time I have answered honestly.",
    "I was there, so you can believe every word of this, or none of it.",
]
NOTE_TEXT = [
    "Meet me at {L} at midnight. Come alone",
    "I know what you did",
    "Don't trust {X}",
    "It isn't over",
    "Look under the third stair",
    "I'm sorry. I should have told you sooner",
]
TELLERS = ["Grandpa", "Grandma", "Dad", "Mum", "the old captain", "Aunt Ida", "the night nurse"]
LISTENERS = ["Lily", "little Sam", "the twins", "Noor", "Oscar", "the youngest one"]

_SLOT = re.compile(r"\{([A-Za-z])\}")


def _cap(t: str) -> str:
    return t[:1].upper() + t[1:] if t else t


class _Ctx:
    """One story's cast, place and narrative person."""

    def __init__(self, rng: random.Random, genre: str, first: bool | None = None):
        g = GENRES[genre]
        self.rng, self.g, self.genre = rng, g, genre
        self.name, sex = rng.choice(g["heroes"])
        self.first = (rng.random() < 0.35) if first is None else first
        x, y = rng.sample(g["others"], 2)
        if self.first:
            v = dict(N="I", S="I", s="I", o="me", p="my", P="My", r="myself")
        else:
            f = sex == "f"
            v = dict(N=self.name, S="She" if f else "He", s="she" if f else "he",
                     o="her" if f else "him", p="her" if f else "his",
                     P="Her" if f else "His", r="herself" if f else "himself")
        v.update(X=x, Y=y, L=rng.choice(g["places"]))
        self.v = v
        self.used: set[str] = set()
        self.named = False

    def fill(self, t: str) -> str:
        def rep(m):
            key = m.group(1)
            val = self.v[key]
            if key == "N" and not self.first:
                if self.named and self.rng.random() < 0.65:
                    val = self.v["s"]
                self.named = True
            a = m.start()
            pre = t[max(0, a - 2):a]
            if a == 0 or pre in (". ", "? ", "! ", ": ") or t[a - 1] == "\n" or \
                    (t[a - 1] == '"' and (a == 1 or t[a - 2] in " \n")):
                val = _cap(val)
            return val
        return _SLOT.sub(rep, t)

    def pick(self, key: str, pool: list[str] | None = None) -> str:
        pool = pool if pool is not None else self.g[key]
        fresh = [x for x in pool if x not in self.used] or pool
        t = self.rng.choice(fresh)
        self.used.add(t)
        return t

    def quote(self, line: str | None = None, who: str | None = None, tag_first: bool = False) -> str:
        rng = self.rng
        line = self.fill(line if line is not None else self.pick("say"))
        who = who if who is not None else rng.choice(["{X}", "{X}", "{N}", "{Y}"])
        who = self.fill("-" + who)[1:]  # no sentence-initial capital after the quote
        if line.endswith("?"):
            verb = rng.choice(["asked", "asked", "said", "whispered"])
        else:
            verb = rng.choice(SAY_VERBS)
        if tag_first:
            end = "" if line[-1] in "?!" else "."
            return f'{_cap(who)} {verb}, "{line}{end}"'
        if line[-1] in "?!":
            return f'"{line}" {who} {verb}.'
        return f'"{line}," {who} {verb}.'

    def body(self, k: int, kinds: tuple[str, ...] = ("desc", "act", "act", "say")) -> list[str]:
        out = []
        for _ in range(k):
            kind = self.rng.choice(kinds)
            out.append(self.quote() if kind == "say" else self.fill(self.pick(kind)))
        return out

    def ending(self, cls: str, allow_stop: bool = True) -> str:
        rng = self.rng
        if cls == "o" and allow_stop and rng.random() < 0.35:
            return ""  # the passage ends after a full stop
        pool = self.g[cls] if rng.random() < 0.55 else GEN_END[cls]
        return self.fill(self.pick(cls, pool))


def _para(*parts) -> str:
    flat = []
    for p in parts:
        if isinstance(p, (list, tuple)):
            flat.extend(x for x in p if x)
        elif p:
            flat.append(p)
    return " ".join(flat)


def _k(rng: random.Random, size: str) -> int:
    return {"s": 0, "m": rng.choice([2, 3]), "l": rng.choice([4, 5, 6])}[size]


# ---------------------------------------------------------------------------
# Fiction frames: f(ctx, cls, size) -> text
# ---------------------------------------------------------------------------

def _fr_narration(c, cls, size):
    return _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_two_paragraphs(c, cls, size):
    k = _k(c.rng, size)
    p1 = _para(c.fill(c.pick("open")), c.body(max(1, k // 2), ("desc",)))
    p2 = _para(c.body(max(1, k - k // 2), ("act", "say")), c.ending(cls))
    return p1 + "\n\n" + p2


def _fr_dialogue(c, cls, size):
    n = {"s": 1, "m": 2, "l": 4}[size]
    lines = []
    for i in range(n):
        who = "{X}" if i % 2 == 0 else "{N}"
        lines.append(c.quote(who=who, tag_first=c.rng.random() < 0.25))
        if size == "l" and i == 1:
            lines.append(c.fill(c.pick("act")))
    return _para(lines, c.ending(cls))


def _fr_dialogue_first(c, cls, size):
    return _para(c.quote(tag_first=False), c.body(_k(c.rng, size), ("desc", "act")), c.ending(cls))


def _fr_chapter_number(c, cls, size):
    head = "Chapter " + c.rng.choice(NUM_WORDS)
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_chapter_title(c, cls, size):
    n = c.rng.randint(2, 31)
    head = c.rng.choice([f"Chapter {n}: {c.pick('titles')}", f"{n}. {c.pick('titles')}",
                         f"CHAPTER {n}\n{c.pick('titles')}"])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_book_opening(c, cls, size):
    head = f"{c.pick('titles')}\n\nby {c.rng.choice(AUTHORS)}"
    if c.rng.random() < 0.5:
        head += "\n\nChapter One"
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_prologue(c, cls, size):
    return "Prologue\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size), ("desc", "desc", "act")),
                                  c.ending(cls))


def _fr_diary(c, cls, size):
    head = f"{c.rng.choice(DAYS)}, {c.rng.randint(1, 28)} {c.rng.choice(MONTHS)}\n\nDear Diary,"
    return head + "\n\n" + _para(c.rng.choice(DIARY_OPEN), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_letter(c, cls, size):
    proper = [x for x in c.g["others"] if x[:1].isupper()]
    head = f"Dear {c.rng.choice(proper)}," if proper else "Dear friend,"
    if cls == "o" and c.rng.random() < 0.4:
        tail = c.rng.choice(["Yours,", "With love, always,", "I remain, as ever, your friend,"])
        return head + "\n\n" + _para(c.fill(c.rng.choice(LETTER_OPEN)), c.body(_k(c.rng, size))) + "\n\n" + tail
    return head + "\n\n" + _para(c.fill(c.rng.choice(LETTER_OPEN)), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_scene_break(c, cls, size):
    k = max(2, _k(c.rng, size))
    p1 = _para(c.body(k // 2 + 1))
    p2 = _para(c.body(k - k // 2 - 1, ("desc", "act")), c.ending(cls, allow_stop=False))
    return p1 + "\n\n* * *\n\n" + p2


def _fr_time_header(c, cls, size):
    if c.rng.random() < 0.5:
        head = c.rng.choice(TIME_HEADERS)
    else:
        head = f"{_cap(c.v['L'])}, {c.rng.choice(['autumn', 'winter', 'spring', 'summer'])}"
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_bedtime_story(c, cls, size):
    rng = c.rng
    teller, kid = rng.choice(TELLERS), rng.choice(LISTENERS)
    lead = [c.fill(c.pick("desc"))] if size != "s" else []
    ask = f'"Tell me a story," said {kid}.'
    if size == "l":
        ask += f' "A real one, not one from a book." {_cap(teller)} laughed and pulled the blanket up to {kid}\'s chin.'
    mid = f"{_cap(teller)} settled into the chair by the bed and began:"
    if cls == "c":
        end = '"Once upon a'
    elif cls == "m":
        end = rng.choice(['"Once upon a time, in a land far away, there lived a',
                          '"Long ago, before the roads were built, there was a',
                          '"There was once a girl who could'])
    else:
        return _para(lead, ask, mid) if rng.random() < 0.5 else _para(lead, ask, mid, '"')
    return _para(lead, ask, mid, end)


def _fr_in_media_res(c, cls, size):
    parts = [c.quote(), c.fill(c.pick("act"))]
    if size != "s":
        parts += c.body(_k(c.rng, size) - 1)
    return _para(parts, c.ending(cls))


def _fr_writing_prompt(c, cls, size):
    label = GENRE_LABEL[c.genre]
    art = "an" if label[0] in "aeiou" else "a"
    head = (f"Writing prompt: Write {art} {label} story set in {c.v['L']}."
            f"\n\n{c.rng.choice(['Story:', 'Response:', 'My attempt:'])}")
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_case_notes(c, cls, size):
    head = c.rng.choice([f"Case notes, day {c.rng.randint(2, 19)}.",
                         f"Private notebook. {c.rng.choice(DAYS)} evening."])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size)), ("desc", "act", "act")), c.ending(cls))


def _fr_log(c, cls, size):
    head = c.rng.choice([f"Captain's log, day {c.rng.randint(12, 480)} of the voyage.",
                         f"Personal log, {c.v['L']}, entry {c.rng.randint(3, 90)}."])
    return _para(head, c.body(max(1, _k(c.rng, size)), ("desc", "act")), c.ending(cls))


def _fr_this_is_the_story(c, cls, size):
    intro = c.rng.choice([
        f"This is the story of {c.name} and {c.v['X']}, and of what happened at {c.v['L']}.",
        f"This is the story of how {c.name} came to {c.v['L']}, and why {c.v['s']} never left.",
    ])
    return _para(intro, c.body(_k(c.rng, size)), c.ending(cls))


def _fr_second_person(c, cls, size):
    n = {"s": 1, "m": 3, "l": 5}[size]
    lines = c.rng.sample(SECOND_PERSON, n)
    if cls == "o" and c.rng.random() < 0.3:
        return _para(lines)
    return _para(lines, c.rng.choice(SECOND_END[cls]))


def _fr_epigraph(c, cls, size):
    q, src = c.rng.choice(EPIGRAPHS)
    return f'"{q}"\n-- {src}\n\n' + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_pov_header(c, cls, size):
    head = f"{c.rng.choice(NUM_WORDS).upper()}\n\n{c.name.upper()}"
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_broken_quote(c, cls, size):
    pre = c.body(_k(c.rng, size))
    line = c.fill(c.pick("say"))
    end = "" if line[-1] in "?!" else ","
    opener = f'"{line}{end}" {c.fill("-{X}")[1:]} said.'
    if cls == "c":
        tail = c.ending("c")
        return _para(pre, opener, tail)
    if cls == "m":
        tail = c.rng.choice(['"The thing is,', '"If you ask me,', '"What I want to know is',
                             '"All I know is that'])
    else:
        tail = '"'
    return _para(pre, opener, tail)


def _fr_storyteller(c, cls, size):
    return _para(c.fill(c.rng.choice(STORYTELLER_OPEN)), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_excerpt(c, cls, size):
    head = c.rng.choice([f"From {c.pick('titles')}, chapter {c.rng.randint(2, 24)}:",
                         f"An excerpt from {c.pick('titles')} by {c.rng.choice(AUTHORS)}"])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_recap(c, cls, size):
    head = c.fill(c.rng.choice(RECAPS)) + f"\n\nChapter {c.rng.choice(NUM_WORDS)}"
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_picture_book(c, cls, size):
    n = {"s": 1, "m": 2, "l": 4}[size]
    pages = [c.fill(c.pick("open"))] + c.body(n - 1, ("desc", "act", "say"))
    pages.append(c.ending(cls, allow_stop=False))
    return "\n\n".join(f"Page {i + 1}\n{t}" for i, t in enumerate(pages))


def _fr_note(c, cls, size):
    note = c.fill(c.rng.choice(NOTE_TEXT))
    find = c.rng.choice(["A note had been slipped under the door. It read:",
                         "Someone had left a folded note on the table. In small, careful letters it said:",
                         "The note was pinned to the door with a kitchen knife. It said:"])
    return _para(c.body(_k(c.rng, size)), find, f'"{note}."', c.ending(cls))


def _fr_flash(c, cls, size):
    # very short piece: a single vivid line and an ending
    return _para(c.fill(c.pick("desc")), c.ending(cls))


def _fr_then_now(c, cls, size):
    k = max(2, _k(c.rng, size))
    then = c.rng.choice(["Back then,", "When {s} was young,", "Years ago,"])
    first = c.fill(c.pick("desc"))
    p1 = c.fill(then) + " " + first[0].lower() + first[1:]
    now = c.rng.choice(["Now", "These days", "Today"])
    second = c.fill(c.pick("act"))
    if second.split()[0] in ("He", "She", "The", "A", "Every", "Somewhere"):
        second = second[0].lower() + second[1:]
    p2 = f"{now}, {second}"
    return _para(p1, c.body(k - 2), p2, c.ending(cls))


# (function, allowed genres or None, forced first person or None)
FICTION_FRAMES = [
    (_fr_narration, None, None),
    (_fr_two_paragraphs, None, None),
    (_fr_dialogue, None, None),
    (_fr_dialogue_first, None, None),
    (_fr_chapter_number, None, None),
    (_fr_chapter_title, None, None),
    (_fr_book_opening, None, None),
    (_fr_prologue, ("fantasy", "scifi", "mystery", "adventure", "literary"), False),
    (_fr_diary, ("romance", "children", "literary", "adventure", "mystery"), True),
    (_fr_letter, ("romance", "literary", "mystery", "adventure", "fantasy"), True),
    (_fr_scene_break, None, None),
    (_fr_time_header, None, None),
    (_fr_bedtime_story, ("children", "fantasy"), None),
    (_fr_in_media_res, None, None),
    (_fr_writing_prompt, None, None),
    (_fr_case_notes, ("mystery",), True),
    (_fr_log, ("scifi",), True),
    (_fr_this_is_the_story, None, False),
    (_fr_second_person, ("fantasy", "mystery", "scifi", "adventure"), None),
    (_fr_epigraph, ("mystery", "fantasy", "romance", "scifi", "literary", "adventure"), None),
    (_fr_pov_header, ("romance", "literary", "fantasy", "scifi", "mystery"), None),
    (_fr_broken_quote, None, None),
    (_fr_storyteller, None, True),
    (_fr_excerpt, None, None),
    (_fr_recap, ("mystery", "fantasy", "romance", "scifi", "literary", "adventure"), None),
    (_fr_picture_book, ("children",), False),
    (_fr_note, ("mystery", "romance", "literary", "adventure", "fantasy"), None),
    (_fr_flash, None, None),
    (_fr_then_now, ("literary", "romance", "adventure", "mystery"), None),
]


def _size(rng: random.Random) -> str:
    r = rng.random()
    return "s" if r < 0.38 else ("m" if r < 0.68 else "l")


def _ok(text: str, lo: int = 10, hi: int = 150) -> bool:
    return bool(text) and lo <= _words(text) <= hi and text.isascii() and text == text.strip()


def generate_fiction() -> list[dict]:
    rng = random.Random(SEED)
    genres = sorted(GENRES)
    out: list[dict] = []
    seen: set[str] = set()
    i = tries = 0
    while len(out) < TARGET:
        tries += 1
        if tries > 50 * TARGET:
            raise RuntimeError("fiction generator could not reach its target")
        cls = "cmo"[i % 3]
        fn, allowed, first = FICTION_FRAMES[(i // 3 + tries) % len(FICTION_FRAMES)] if tries % 7 == 0 \
            else FICTION_FRAMES[(i // 3) % len(FICTION_FRAMES)]
        genre = rng.choice(allowed or genres)
        ctx = _Ctx(rng, genre, first)
        text = _clean(fn(ctx, cls, _size(rng)))
        if not _ok(text) or _norm(text) in seen:
            continue
        seen.add(_norm(text))
        out.append({"source": "fiction", "text": text})
        i += 1
    return out


# ===========================================================================
# QA
# ===========================================================================
#
# Each fact: (topic, question, answer, statement, distractors, explanation).
# The statement marks the answer's place with "_"; the text before "_" is the
# near-certain stem. Distractors are separated by "|".

FACTS: list[tuple[str, str, str, str, str, str]] = []


def _f(topic, q, a, stmt, wrong, expl):
    FACTS.append((topic, q, a, stmt, wrong, expl))


# --- science ---------------------------------------------------------------
_f("science", "What is the chemical symbol for gold?", "Au",
   "The chemical symbol for gold is _.", "Ag|Go|Gd",
   "The symbol comes from aurum, the Latin word for gold. Many element symbols are based on Latin "
   "names, which is why they do not always match the English word.")
_f("science", "Which planet is closest to the Sun?", "Mercury",
   "The planet closest to the Sun is _.", "Venus|Mars|Earth",
   "Mercury goes around the Sun in about 88 Earth days. Even so, it is not the hottest planet; "
   "Venus is hotter, because its thick atmosphere traps heat like a blanket.")
_f("science", "How many bones are there in the adult human body?", "206",
   "An adult human skeleton has _ bones.", "186|212|250",
   "Babies are born with around 300 bones, and many of them fuse together as the child grows. "
   "The smallest bone, the stapes, sits deep inside the middle ear.")
_f("science", "Which gas do plants take in from the air to carry out photosynthesis?", "carbon dioxide",
   "During photosynthesis, plants take in _ from the air.", "oxygen|nitrogen|helium",
   "Plants use the energy of sunlight to combine carbon dioxide and water into sugar. Oxygen is "
   "given off as a by-product, which is why forests and ocean algae matter so much for the air we breathe.")
_f("science", "At what temperature in degrees Celsius does water boil at sea level?", "100",
   "At sea level, pure water boils at _ degrees Celsius.", "90|110|212",
   "Higher up, the air pressure is lower, so water boils at a lower temperature. That is why "
   "cooking pasta high in the mountains takes noticeably longer.")
_f("science", "What is the largest planet in our solar system?", "Jupiter",
   "The largest planet in our solar system is _.", "Saturn|Neptune|Uranus",
   "Jupiter is a gas giant roughly eleven times wider than Earth. Its Great Red Spot is a storm "
   "that has been swirling for at least a few hundred years.")
_f("science", "In which part of an animal cell is most of the DNA kept?", "the nucleus",
   "In animal cells, most of the DNA is kept in _.", "the ribosomes|the cell wall|the vacuole",
   "The nucleus is wrapped in a double membrane that controls what passes in and out. Bacteria have "
   "no nucleus at all; their DNA simply floats in the cell.")
_f("science", "What force keeps the planets in orbit around the Sun?", "gravity",
   "The planets are held in their orbits around the Sun by _.", "magnetism|friction|air pressure",
   "Gravity pulls every mass toward every other mass. The planets move sideways so fast that, "
   "instead of falling into the Sun, they keep falling around it.")
_f("science", "How many legs does an adult insect have?", "six",
   "Every adult insect has _ legs.", "eight|four|ten",
   "Insects also have three main body parts: the head, the thorax and the abdomen. Spiders have "
   "eight legs, which is one reason they are not counted as insects.")
_f("science", "Roughly how many kilometres per second does light travel in a vacuum?", "300,000",
   "Light travels through a vacuum at roughly _ kilometres per second.", "3,000|30,000|3 million",
   "At that speed, light from the Sun takes a little over eight minutes to reach Earth. Nothing that "
   "carries information can travel faster.")
_f("science", "What is the hardest naturally occurring material?", "diamond",
   "The hardest naturally occurring material is _.", "quartz|granite|iron",
   "Diamond is pure carbon with its atoms locked into a rigid three-dimensional lattice. Only another "
   "diamond can scratch it, which is why diamond-tipped tools are used to cut stone.")
_f("science", "Which organ pumps blood around the human body?", "the heart",
   "Blood is pumped around the body by _.", "the liver|the lungs|the kidneys",
   "A resting adult heart beats roughly 60 to 100 times a minute. Over a long lifetime that adds up "
   "to more than two billion beats.")
_f("science", "At what temperature in degrees Fahrenheit does water freeze?", "32",
   "On the Fahrenheit scale, water freezes at _ degrees.", "0|100|212",
   "The Fahrenheit scale puts freezing at 32 and boiling at 212, so there are 180 degrees between "
   "them. The Celsius scale uses 0 and 100 instead, which makes conversions a little awkward.")
_f("science", "Which planet is often called the Red Planet?", "Mars",
   "The planet often called the Red Planet is _.", "Jupiter|Venus|Mercury",
   "Mars gets its colour from iron oxide, which is essentially rust, in the dust that covers its "
   "surface. It also has the tallest known volcano in the solar system, Olympus Mons.")
_f("science", "What is the most abundant gas in Earth's atmosphere?", "nitrogen",
   "The most abundant gas in Earth's atmosphere is _.", "oxygen|carbon dioxide|argon",
   "Nitrogen makes up about 78 percent of the air, while oxygen makes up about 21 percent. Carbon "
   "dioxide, despite its effect on climate, is only a tiny fraction of one percent.")
_f("science", "What is the dense centre of an atom called?", "the nucleus",
   "The dense centre of an atom is called _.", "the electron shell|the orbital|the valence",
   "The nucleus contains protons and neutrons and holds almost all of the atom's mass. Yet it is "
   "tiny: if an atom were the size of a stadium, the nucleus would be about the size of a pea.")
_f("science", "What class of animal do whales belong to?", "mammals",
   "Although they live in the sea, whales are _.", "fish|reptiles|amphibians",
   "Whales breathe air through blowholes, are warm-blooded, and feed their young on milk. Their "
   "ancestors were land animals that returned to the water millions of years ago.")
_f("science", "What is it called when water vapour cools and turns back into liquid?", "condensation",
   "When water vapour cools and turns back into a liquid, the process is called _.",
   "evaporation|sublimation|filtration",
   "Condensation is why a cold glass gets wet on the outside on a warm day. Water vapour in the air "
   "touches the cold surface, cools down, and gathers into droplets.")
_f("science", "How many chromosomes are found in most human cells?", "46",
   "Most human cells contain _ chromosomes.", "23|44|48",
   "The 46 chromosomes come in 23 pairs, with one set inherited from each parent. Egg and sperm "
   "cells carry only 23, so that the total is restored when they combine.")
_f("science", "What does DNA stand for?", "deoxyribonucleic acid",
   "DNA stands for _.", "dinitrogen acid|deoxyribose nitrate|dual nucleic acid",
   "DNA carries the instructions for building and running living things. The instructions are "
   "written in a code of four chemical bases, usually abbreviated A, T, C and G.")
_f("science", "In what unit is electrical resistance measured?", "ohms",
   "Electrical resistance is measured in _.", "volts|amperes|watts",
   "The unit is named after the German physicist Georg Ohm. His law says that the voltage across a "
   "conductor equals the current through it multiplied by its resistance.")
_f("science", "Which blood cells help the body fight infection?", "white blood cells",
   "The blood cells that defend the body against infection are _.", "red blood cells|platelets|nerve cells",
   "White blood cells patrol the blood and tissues, attacking bacteria and viruses. Some of them also "
   "remember past invaders, which is how vaccines give lasting protection.")
_f("science", "What is the closest star to Earth?", "the Sun",
   "The closest star to Earth is _.", "Proxima Centauri|Sirius|Polaris",
   "It is easy to forget that the Sun is a star. The next closest, Proxima Centauri, is more than "
   "four light-years away.")
_f("science", "What is the pH of pure water at room temperature?", "7",
   "Pure water at room temperature has a pH of _.", "0|5|14",
   "A pH of 7 is neutral. Anything below 7 is acidic, like lemon juice, and anything above 7 is "
   "alkaline, like soap or baking soda dissolved in water.")
_f("science", "Which vitamin does the skin make when it is exposed to sunlight?", "vitamin D",
   "When skin is exposed to sunlight, the body makes _.", "vitamin C|vitamin A|vitamin B12",
   "Vitamin D helps the body absorb calcium, which keeps bones strong. People who get little "
   "sunlight in winter sometimes need it from food or supplements instead.")
_f("science", "How many planets are there in our solar system?", "eight",
   "There are _ planets in our solar system.", "seven|nine|ten",
   "Pluto used to be counted as the ninth planet. In 2006 astronomers reclassified it as a dwarf "
   "planet, because it has not cleared its orbit of other objects.")
_f("science", "What is the largest organ of the human body?", "the skin",
   "The largest organ of the human body is _.", "the liver|the brain|the lungs",
   "The skin of an adult covers around two square metres. It keeps water in, keeps germs out, and "
   "helps control body temperature through sweat.")
_f("science", "What mainly causes the ocean tides?", "the Moon",
   "Ocean tides are caused mainly by the gravity of _.", "the wind|the Earth's core|the planets",
   "The Moon pulls on the oceans, creating a bulge of water on the side facing it and another on "
   "the opposite side. As Earth rotates, a coastline passes through these bulges, giving two high tides a day.")
_f("science", "Which part of the plant usually absorbs water from the soil?", "the roots",
   "Plants absorb most of their water from the soil through _.", "the leaves|the flowers|the bark",
   "Tiny root hairs greatly increase the surface area in contact with the soil. The water then "
   "travels up through the stem to the leaves, where much of it evaporates.")
_f("science", "What kind of energy does a moving object have because of its motion?", "kinetic energy",
   "The energy an object has because it is moving is called _.", "potential energy|chemical energy|nuclear energy",
   "Kinetic energy depends on both mass and speed, and speed counts twice over: doubling the speed "
   "of a car quadruples its kinetic energy. That is why fast crashes are so much more dangerous.")

# --- history ---------------------------------------------------------------
_f("history", "In what year did the Second World War end?", "1945",
   "The Second World War ended in _.", "1939|1918|1950",
   "Germany surrendered in May 1945. Japan announced its surrender in August, after the atomic "
   "bombings of Hiroshima and Nagasaki, and signed formally in September.")
_f("history", "Who was the first person to walk on the Moon?", "Neil Armstrong",
   "The first person to walk on the Moon was _.", "Buzz Aldrin|Yuri Gagarin|John Glenn",
   "He stepped onto the surface in July 1969 during the Apollo 11 mission. Buzz Aldrin followed "
   "him, while Michael Collins stayed in orbit aboard the command module.")
_f("history", "Which ancient civilisation built the pyramids of Giza?", "the ancient Egyptians",
   "The pyramids of Giza were built by _.", "the Romans|the Greeks|the Aztecs",
   "They were built more than 4,500 years ago as tombs for pharaohs. The Great Pyramid remained the "
   "tallest human-made structure on Earth for thousands of years.")
_f("history", "Who was the first President of the United States?", "George Washington",
   "The first President of the United States was _.", "Thomas Jefferson|Abraham Lincoln|John Adams",
   "He took office in 1789 after leading the Continental Army in the War of Independence. He "
   "chose to step down after two terms, setting a custom that lasted for well over a century.")
_f("history", "In which year did the Berlin Wall fall?", "1989",
   "The Berlin Wall fell in _.", "1961|1991|1975",
   "The wall had divided the city since 1961. When the border crossings opened in November 1989, "
   "crowds began chipping pieces off it, and Germany was reunified less than a year later.")
_f("history", "What was the name of the ship that carried the Pilgrims to North America in 1620?",
   "the Mayflower", "In 1620 the Pilgrims crossed the Atlantic aboard _.",
   "the Santa Maria|the Endeavour|the Beagle",
   "The voyage took about two months, and the passengers founded Plymouth Colony in what is now "
   "Massachusetts. Roughly half of them died during the first hard winter.")
_f("history", "In which city was Julius Caesar assassinated?", "Rome",
   "Julius Caesar was assassinated in _ in 44 BC.", "Athens|Alexandria|Carthage",
   "He was stabbed by a group of senators on the Ides of March, the fifteenth of the month. They "
   "feared he was making himself a king, but his death led to civil war rather than a restored republic.")
_f("history", "Who was the main author of the Declaration of Independence?", "Thomas Jefferson",
   "The main author of the Declaration of Independence was _.", "Benjamin Franklin|George Washington|John Adams",
   "A committee of five was appointed to draft it, but Jefferson wrote most of the text. It was "
   "adopted on the fourth of July, 1776, which is why that date became a national holiday.")
_f("history", "In what year did the First World War begin?", "1914",
   "The First World War began in _.", "1905|1918|1939",
   "The assassination of Archduke Franz Ferdinand in Sarajevo set off a chain of alliances and "
   "declarations of war. Within weeks, most of the great powers of Europe were fighting.")
_f("history", "Which civilisation built Machu Picchu?", "the Inca",
   "Machu Picchu, high in the Andes, was built by _.", "the Maya|the Aztecs|the Olmecs",
   "It was built in the fifteenth century on a mountain ridge in what is now Peru. Its stone walls "
   "were cut so precisely that many fit together without any mortar.")
_f("history", "Who was the first woman to win a Nobel Prize?", "Marie Curie",
   "The first woman to win a Nobel Prize was _.", "Rosalind Franklin|Ada Lovelace|Florence Nightingale",
   "She shared the 1903 Nobel Prize in Physics for work on radioactivity. In 1911 she won a second "
   "one, in chemistry, making her the first person to win Nobel Prizes in two different sciences.")
_f("history", "What invention is Johannes Gutenberg best known for?", "the printing press",
   "Johannes Gutenberg is best known for introducing _ with movable type to Europe.",
   "the telescope|the steam engine|the compass",
   "Around 1440 he developed a way to print with reusable metal letters. Books became far cheaper "
   "to make, and ideas began to spread faster than ever before.")
_f("history", "What is the name of the Roman wall that runs across northern England?", "Hadrian's Wall",
   "The Roman wall that runs across northern England is called _.", "Offa's Dyke|the Antonine Wall|the Great Wall",
   "Building began around AD 122 on the orders of the emperor Hadrian. It ran for about 117 "
   "kilometres, with small forts called milecastles spaced along its length.")
_f("history", "Who was the British Prime Minister for most of the Second World War?", "Winston Churchill",
   "For most of the Second World War, Britain's Prime Minister was _.",
   "Neville Chamberlain|Clement Attlee|David Lloyd George",
   "He took office in May 1940, at one of the darkest moments of the war. His radio speeches became "
   "famous, though he lost the general election held just after victory in Europe.")
_f("history", "In what year did Christopher Columbus first reach the Americas?", "1492",
   "Christopher Columbus first reached the Americas in _.", "1066|1588|1620",
   "He landed in the Bahamas while looking for a westward route to Asia. He never accepted that "
   "he had reached a continent unknown to Europeans.")
_f("history", "Which country gave the Statue of Liberty to the United States?", "France",
   "The Statue of Liberty was a gift to the United States from _.", "Britain|Spain|Italy",
   "It was dedicated in New York Harbor in 1886. The copper skin was designed by Frederic Auguste "
   "Bartholdi, and the iron framework inside was engineered by Gustave Eiffel.")
_f("history", "In which country did the Renaissance begin?", "Italy",
   "The Renaissance began in _.", "France|England|Germany",
   "It started in Italian city-states such as Florence in the fourteenth century. Wealthy families "
   "paid artists and scholars, who looked back to ancient Greece and Rome for inspiration.")
_f("history", "Who was the first emperor to unify China?", "Qin Shi Huang",
   "The first emperor to unify China was _.", "Kublai Khan|Sun Yat-sen|Confucius",
   "He united the warring states in 221 BC and standardised writing, coins and measurements. He "
   "was buried with thousands of life-sized clay soldiers, now known as the Terracotta Army.")
_f("history", "In what year did the Titanic sink?", "1912",
   "The Titanic sank in _, on its maiden voyage.", "1905|1915|1921",
   "It struck an iceberg in the North Atlantic in April of that year. There were not enough "
   "lifeboats for everyone on board, and more than 1,500 people died.")
_f("history", "Who led the non-violent campaign for India's independence from British rule?", "Mahatma Gandhi",
   "The best-known leader of India's non-violent independence movement was _.",
   "Jawaharlal Nehru|Muhammad Ali Jinnah|Rabindranath Tagore",
   "He organised boycotts, marches and fasts rather than armed revolt. One of the most famous was "
   "the Salt March of 1930, a protest against a British tax on salt.")
_f("history", "Whose expedition was the first to sail all the way around the world?", "Ferdinand Magellan",
   "The first expedition to sail around the world set out under the command of _.",
   "Francis Drake|Vasco da Gama|James Cook",
   "Magellan himself did not survive the journey; he was killed in the Philippines in 1521. Juan "
   "Sebastian Elcano brought the last remaining ship home to Spain in 1522.")
_f("history", "What name is given to the long rivalry between the United States and the Soviet Union after 1945?",
   "the Cold War", "The long rivalry between the United States and the Soviet Union after 1945 is known as _.",
   "the Great War|the Hundred Years' War|the Long Peace",
   "It was called cold because the two superpowers never fought each other directly. Instead they "
   "competed through arms races, the space race and wars fought by their allies.")
_f("history", "Which Egyptian queen formed an alliance with the Roman general Mark Antony?", "Cleopatra",
   "The Egyptian queen who allied herself with Mark Antony was _.", "Nefertiti|Hatshepsut|Boudica",
   "She was the last active ruler of the Ptolemaic kingdom of Egypt. After their defeat at the "
   "Battle of Actium in 31 BC, Egypt became a Roman province.")
_f("history", "Which English king agreed to the Magna Carta in 1215?", "King John",
   "The Magna Carta was agreed to in 1215 by _.", "King Richard|King Henry VIII|King Alfred",
   "Rebellious barons forced him to accept limits on royal power. Many of its clauses were soon "
   "ignored, but the idea that even a king must obey the law proved very influential.")
_f("history", "Which giant bronze statue, one of the Seven Wonders of the Ancient World, stood on the island of Rhodes?",
   "the Colossus of Rhodes", "The giant statue of the sun god that stood on Rhodes was known as _.",
   "the Lighthouse of Alexandria|the Statue of Zeus|the Mausoleum",
   "It stood for only about fifty years before an earthquake brought it down. The broken pieces "
   "lay on the ground for centuries and were still a tourist attraction in Roman times.")

# --- geography -------------------------------------------------------------
_f("geography", "What is the capital of Australia?", "Canberra",
   "The capital of Australia is _.", "Sydney|Melbourne|Perth",
   "Canberra was chosen as a compromise because Sydney and Melbourne both wanted the title. It was "
   "a purpose-built city, planned by the American architects Walter Burley Griffin and Marion Mahony Griffin.")
_f("geography", "What is the longest river in Africa?", "the Nile",
   "The longest river in Africa is _.", "the Congo|the Niger|the Zambezi",
   "It flows north for about 6,650 kilometres into the Mediterranean Sea. Whether it or the Amazon "
   "is the longest river in the world depends on how the sources are measured.")
_f("geography", "Which is the largest ocean on Earth?", "the Pacific",
   "The largest ocean on Earth is _.", "the Atlantic|the Indian Ocean|the Arctic",
   "The Pacific covers about a third of the planet's surface, more than all the land put together. "
   "It also contains the deepest known point in the ocean.")
_f("geography", "What is the highest mountain above sea level?", "Mount Everest",
   "The highest mountain above sea level is _.", "K2|Kangchenjunga|Kilimanjaro",
   "It rises about 8,849 metres on the border between Nepal and China. Measured from base to peak, "
   "though, Mauna Kea in Hawaii is taller, since most of it lies underwater.")
_f("geography", "What is the capital of Canada?", "Ottawa",
   "The capital of Canada is _.", "Toronto|Vancouver|Montreal",
   "Ottawa sits on the border between the provinces of Ontario and Quebec. Queen Victoria chose it "
   "in 1857, partly because it was farther from the United States than the rival cities.")
_f("geography", "What is the largest hot desert in the world?", "the Sahara",
   "The largest hot desert in the world is _.", "the Gobi|the Kalahari|the Atacama",
   "It stretches across much of North Africa. If cold deserts are counted too, Antarctica is larger, "
   "because a desert is defined by how little rain or snow falls, not by heat.")
_f("geography", "How many continents are there, by the most common count?", "seven",
   "By the most common count, there are _ continents.", "five|six|eight",
   "They are Africa, Antarctica, Asia, Australia, Europe, North America and South America. Some "
   "countries teach a six-continent model instead, joining the Americas or Europe and Asia.")
_f("geography", "Which country has the largest population in the world?", "India",
   "The country with the largest population in the world is now _.", "China|the United States|Indonesia",
   "India overtook China around 2023, according to United Nations estimates. Both countries have "
   "more than 1.4 billion people.")
_f("geography", "What is the capital of Japan?", "Tokyo",
   "The capital of Japan is _.", "Kyoto|Osaka|Hiroshima",
   "Tokyo was once a fishing village called Edo. Kyoto served as the imperial capital for more "
   "than a thousand years before the emperor moved to Tokyo in 1868.")
_f("geography", "Which river flows through Paris?", "the Seine",
   "The river that flows through Paris is _.", "the Loire|the Rhine|the Thames",
   "The Seine rises in Burgundy and empties into the English Channel. Dozens of bridges cross it "
   "within the city, the oldest standing one being the Pont Neuf.")
_f("geography", "Which is the largest country in the world by area?", "Russia",
   "The largest country in the world by area is _.", "Canada|China|the United States",
   "Russia spans eleven time zones, from the Baltic Sea to the Pacific. Canada is second, with a "
   "much smaller population.")
_f("geography", "What is the smallest country in the world?", "Vatican City",
   "The smallest country in the world is _.", "Monaco|San Marino|Liechtenstein",
   "It covers less than half a square kilometre and lies entirely within the city of Rome. It is "
   "the seat of the Pope and the headquarters of the Roman Catholic Church.")
_f("geography", "On which continent is Egypt mostly located?", "Africa",
   "Egypt is located mostly in _.", "Asia|Europe|the Middle East only",
   "Most of Egypt lies in the north-eastern corner of Africa. The Sinai Peninsula, on the other side "
   "of the Suez Canal, is usually counted as part of Asia.")
_f("geography", "What is the capital of Brazil?", "Brasilia",
   "The capital of Brazil is _.", "Rio de Janeiro|Sao Paulo|Salvador",
   "Brasilia was built from scratch in the late 1950s and became the capital in 1960. Its layout, "
   "seen from above, is often compared to an aeroplane or a bird.")
_f("geography", "What imaginary line divides the Earth into the Northern and Southern Hemispheres?", "the equator",
   "The Earth is divided into the Northern and Southern Hemispheres by _.",
   "the prime meridian|the Tropic of Cancer|the International Date Line",
   "The equator lies at zero degrees latitude. Places near it have roughly twelve hours of daylight "
   "all year round.")
_f("geography", "Which country is home to the Great Barrier Reef?", "Australia",
   "The Great Barrier Reef lies off the coast of _.", "Indonesia|New Zealand|the Philippines",
   "It is the largest coral reef system in the world, stretching for more than 2,000 kilometres. It "
   "is so large that it can be seen from space.")
_f("geography", "What is the tallest uninterrupted waterfall in the world?", "Angel Falls",
   "The world's tallest uninterrupted waterfall is _, in Venezuela.", "Niagara Falls|Victoria Falls|Iguazu Falls",
   "Its water drops nearly a kilometre from the edge of a flat-topped mountain. Much of the spray "
   "turns to mist before it reaches the bottom.")
_f("geography", "Which mountain range is traditionally seen as part of the boundary between Europe and Asia?",
   "the Ural Mountains", "Part of the traditional boundary between Europe and Asia is formed by _.",
   "the Alps|the Andes|the Pyrenees",
   "The Urals run roughly north to south through western Russia. They are very old mountains, worn "
   "down over hundreds of millions of years.")
_f("geography", "What is the capital of Kenya?", "Nairobi",
   "The capital of Kenya is _.", "Mombasa|Kampala|Addis Ababa",
   "Nairobi began as a railway depot in the late 1890s. It is one of the few capital cities with a "
   "national park, full of giraffes and lions, right on its edge.")
_f("geography", "What is the largest lake in Africa?", "Lake Victoria",
   "The largest lake in Africa is _.", "Lake Tanganyika|Lake Malawi|Lake Chad",
   "It is shared by Uganda, Kenya and Tanzania. It is one of the sources of the Nile.")
_f("geography", "Which sea lies between southern Europe and North Africa?", "the Mediterranean",
   "The sea between southern Europe and North Africa is _.", "the Black Sea|the Red Sea|the Baltic",
   "It connects to the Atlantic through the narrow Strait of Gibraltar. Its name comes from Latin "
   "words meaning the middle of the land.")
_f("geography", "What is the capital of Argentina?", "Buenos Aires",
   "The capital of Argentina is _.", "Santiago|Montevideo|Cordoba",
   "The city sits on the broad estuary of the Rio de la Plata. Its people are often called portenos, "
   "meaning people of the port.")
_f("geography", "Which is the largest US state by area?", "Alaska",
   "The largest state in the United States by area is _.", "Texas|California|Montana",
   "Alaska is more than twice the size of Texas. The United States bought it from Russia in 1867, "
   "and many people at the time thought it was a foolish purchase.")
_f("geography", "What is the deepest known point in Earth's oceans?", "the Challenger Deep",
   "The deepest known point in the oceans is _, in the Mariana Trench.",
   "the Puerto Rico Trench|the Java Trench|the Tonga Deep",
   "It lies nearly 11 kilometres below the surface of the western Pacific. If Mount Everest were "
   "placed at the bottom, its peak would still be well under water.")
_f("geography", "Which European country is shaped like a boot?", "Italy",
   "The European country shaped like a boot is _.", "Greece|Spain|Portugal",
   "The toe of the boot points toward Sicily, and the heel is the region of Apulia. The Apennine "
   "Mountains run down its length like a spine.")

# --- language --------------------------------------------------------------
_f("language", "What is the plural of \"mouse\"?", "mice",
   "The plural of \"mouse\" is _.", "mouses|meese|mousen",
   "English keeps a handful of old plurals formed by changing the vowel, such as foot and feet or "
   "goose and geese. For computer mice, both mice and mouses have been used.")
_f("language", "What is a word that means the opposite of another word called?", "an antonym",
   "A word with the opposite meaning of another word is called _.", "a synonym|a homonym|an acronym",
   "Hot and cold are antonyms, as are early and late. A word with the same meaning, on the other "
   "hand, is a synonym.")
_f("language", "How many letters are there in the English alphabet?", "26",
   "The English alphabet has _ letters.", "24|28|30",
   "Five of them are usually counted as vowels: a, e, i, o and u. The letter y sometimes acts as a "
   "vowel too, as in the word gym.")
_f("language", "What is the past tense of \"go\"?", "went",
   "The past tense of \"go\" is _.", "goed|gone|going",
   "Went originally belonged to a different verb, wend, meaning to travel. Over time it replaced "
   "the old past tense of go, which is why the two look nothing alike.")
_f("language", "Which language has the most native speakers in the world?", "Mandarin Chinese",
   "The language with the most native speakers is _.", "Spanish|English|Hindi",
   "Mandarin has close to a billion native speakers. English has more speakers in total if people "
   "who learned it as a second language are included.")
_f("language", "What part of speech is used to describe a noun?", "an adjective",
   "A word that describes a noun is called _.", "an adverb|a verb|a preposition",
   "In the phrase a tall tree, tall is the adjective. Words that describe verbs, like quickly, are "
   "called adverbs.")
_f("language", "What language is the official language of Brazil?", "Portuguese",
   "The official language of Brazil is _.", "Spanish|French|Italian",
   "Brazil was a Portuguese colony for more than three centuries. Today it has far more Portuguese "
   "speakers than Portugal itself.")
_f("language", "How many syllables does a traditional haiku have in total?", "17",
   "A traditional haiku has _ syllables in total.", "12|14|21",
   "They are arranged in three lines of five, seven and five. In Japanese the count is actually of "
   "sound units called on, which are not quite the same as English syllables.")
_f("language", "What is the Spanish word for \"thank you\"?", "gracias",
   "In Spanish, \"thank you\" is _.", "por favor|de nada|hola",
   "The usual reply is de nada, which means it is nothing. To say thank you very much, people say "
   "muchas gracias.")
_f("language", "What do we call a word that reads the same forwards and backwards, like \"level\"?", "a palindrome",
   "A word that reads the same forwards and backwards is called _.", "an anagram|an acronym|a homophone",
   "Other examples include radar, noon and racecar. Whole sentences can be palindromes too, if you "
   "ignore the spaces and punctuation.")
_f("language", "What is the French word for \"cat\"?", "chat",
   "In French, the word for \"cat\" is _.", "chien|gato|katze",
   "The final t is silent, so it sounds like sha. A female cat is une chatte.")
_f("language", "What is the comparative form of \"good\"?", "better",
   "The comparative form of \"good\" is _.", "gooder|best|more good",
   "Good is irregular: good, better, best. Bad behaves the same way, becoming worse and worst.")
_f("language", "What does the abbreviation \"e.g.\" mean?", "for example",
   "The abbreviation \"e.g.\" means _.", "that is|and so on|note well",
   "It comes from the Latin exempli gratia. It is often confused with i.e., which means that is "
   "and introduces a restatement rather than an example.")
_f("language", "Which alphabet is used to write Russian?", "the Cyrillic alphabet",
   "Russian is written in _.", "the Latin alphabet|the Greek alphabet|the Arabic alphabet",
   "Cyrillic is named after Saint Cyril, a ninth-century missionary. It is also used for "
   "Ukrainian, Bulgarian, Serbian and several other languages.")
_f("language", "What punctuation mark is used at the end of a direct question?", "a question mark",
   "A direct question in English ends with _.", "a full stop|a semicolon|an exclamation mark",
   "In Spanish, questions also begin with an upside-down question mark. Greek uses a mark that looks "
   "like an English semicolon.")

# --- arts ------------------------------------------------------------------
_f("arts", "Who painted the Mona Lisa?", "Leonardo da Vinci",
   "The Mona Lisa was painted by _.", "Michelangelo|Raphael|Rembrandt",
   "He worked on it for years in the early sixteenth century. It now hangs behind protective glass "
   "in the Louvre in Paris, where it draws enormous crowds every day.")
_f("arts", "Which composer wrote the Ninth Symphony that ends with the \"Ode to Joy\"?", "Ludwig van Beethoven",
   "The Ninth Symphony with its famous \"Ode to Joy\" was composed by _.",
   "Wolfgang Amadeus Mozart|Johann Sebastian Bach|Joseph Haydn",
   "By the time it was first performed in 1824, he was almost completely deaf. The story goes that "
   "he had to be turned around to see the audience applauding.")
_f("arts", "Who wrote the play Romeo and Juliet?", "William Shakespeare",
   "The play Romeo and Juliet was written by _.", "Christopher Marlowe|Ben Jonson|Geoffrey Chaucer",
   "It was probably written in the mid-1590s. The story of two young lovers from feuding families "
   "was not new, but his version became the one everyone remembers.")
_f("arts", "How many keys does a standard modern piano have?", "88",
   "A standard modern piano has _ keys.", "76|84|96",
   "There are 52 white keys and 36 black keys. Together they span a little over seven octaves.")
_f("arts", "Which Dutch painter is famous for The Starry Night and for cutting off part of his own ear?",
   "Vincent van Gogh", "The Starry Night was painted by _.", "Rembrandt|Johannes Vermeer|Piet Mondrian",
   "He painted it in 1889 while staying at an asylum in southern France. He sold very few paintings "
   "during his lifetime, yet today his work is among the most valuable in the world.")
_f("arts", "What are the three primary colours in traditional painting?", "red, yellow and blue",
   "In traditional painting, the three primary colours are _.", "red, green and blue|orange, green and purple|black, white and grey",
   "Mixing them in pairs gives the secondary colours: orange, green and purple. Screens and light "
   "use a different set, red, green and blue, because light mixes differently from paint.")
_f("arts", "Who wrote the novel Pride and Prejudice?", "Jane Austen",
   "Pride and Prejudice was written by _.", "Charlotte Bronte|George Eliot|Mary Shelley",
   "It was published in 1813 without her name on it; the title page said only that it was by the "
   "author of Sense and Sensibility.")
_f("arts", "Who painted the ceiling of the Sistine Chapel?", "Michelangelo",
   "The ceiling of the Sistine Chapel was painted by _.", "Raphael|Leonardo da Vinci|Caravaggio",
   "He worked on it from 1508 to 1512, standing on scaffolding rather than lying on his back, as "
   "legend often claims. He thought of himself mainly as a sculptor, not a painter.")
_f("arts", "How many strings does a standard violin have?", "four",
   "A standard violin has _ strings.", "five|six|three",
   "They are tuned to G, D, A and E, each a fifth apart. The viola, cello and double bass are its "
   "larger relatives.")
_f("arts", "Which art movement is Salvador Dali most associated with?", "Surrealism",
   "Salvador Dali is best known as a leading figure of _.", "Cubism|Impressionism|Pop Art",
   "Surrealist artists tried to paint the logic of dreams. His painting of soft, melting clocks is "
   "one of the best-known images of the movement.")
_f("arts", "Who wrote Don Quixote?", "Miguel de Cervantes",
   "Don Quixote was written by _.", "Lope de Vega|Gabriel Garcia Marquez|Federico Garcia Lorca",
   "It appeared in two parts, in 1605 and 1615. It tells of a man who reads so many tales of "
   "chivalry that he sets out to become a knight himself.")
_f("arts", "What is a group of four musicians called?", "a quartet",
   "A group of four musicians is called _.", "a trio|a quintet|an octet",
   "The string quartet, with two violins, a viola and a cello, is one of the most important forms in "
   "classical chamber music.")
_f("arts", "Which artist carved the famous marble statue of David that stands in Florence?", "Michelangelo",
   "The famous marble David in Florence was carved by _.", "Auguste Rodin|Raphael|Antonio Canova",
   "He finished it in 1504, when he was still in his twenties. The statue is more than five metres "
   "tall and was carved from a single block that other sculptors had abandoned.")
_f("arts", "What is the Japanese art of paper folding called?", "origami",
   "The Japanese art of folding paper into shapes is called _.", "ikebana|bonsai|calligraphy",
   "Traditional origami uses a single square sheet with no cuts or glue. One of the best-known "
   "models is the crane, a symbol of long life and hope.")
_f("arts", "Who painted Guernica?", "Pablo Picasso",
   "Guernica was painted by _.", "Joan Miro|Henri Matisse|Francisco Goya",
   "He painted it in 1937 in response to the bombing of the Basque town of Guernica during the "
   "Spanish Civil War. It is painted only in black, white and grey.")
_f("arts", "What is the highest standard female singing voice called?", "soprano",
   "The highest standard female singing voice is called _.", "alto|tenor|baritone",
   "In a choir, the parts are usually soprano, alto, tenor and bass, from highest to lowest.")
_f("arts", "Which ancient Greek poet is traditionally credited with the Odyssey?", "Homer",
   "The Odyssey is traditionally credited to _.", "Sophocles|Virgil|Aesop",
   "It follows Odysseus on his ten-year journey home after the Trojan War. Scholars still debate "
   "whether one poet or many shaped the poems that carry his name.")
_f("arts", "Which keyboard instrument, often found in churches, makes sound by forcing air through pipes?",
   "the pipe organ", "The large keyboard instrument that makes sound by pushing air through pipes is _.",
   "the harpsichord|the accordion|the celesta",
   "Large organs can have thousands of pipes and several keyboards, including one played with the "
   "feet. Each pipe produces only one note.")

# --- everyday --------------------------------------------------------------
_f("everyday", "How many days are there in a leap year?", "366",
   "A leap year has _ days.", "364|365|367",
   "The extra day is added to February. Leap years keep the calendar in step with Earth's orbit, "
   "which takes about a quarter of a day longer than 365 days.")
_f("everyday", "What colour do you get when you mix blue and yellow paint?", "green",
   "Mixing blue and yellow paint gives you _.", "purple|orange|brown",
   "Blue and yellow are both primary colours in painting. Adding more yellow gives a lighter, "
   "warmer green, and adding more blue gives a deeper one.")
_f("everyday", "How many sides does a hexagon have?", "six",
   "A hexagon has _ sides.", "five|seven|eight",
   "Bees build their honeycomb from hexagons because the shape fits together with no gaps and uses "
   "the least wax for the space it encloses.")
_f("everyday", "Which month has the fewest days?", "February",
   "The month with the fewest days is _.", "April|June|November",
   "It has 28 days in most years and 29 in a leap year. Every other month has either 30 or 31.")
_f("everyday", "What is the main ingredient of guacamole?", "avocado",
   "The main ingredient of guacamole is _.", "tomato|cucumber|green pepper",
   "The avocado is mashed with lime juice, salt and often onion, chilli and coriander. The lime "
   "juice helps stop it from turning brown.")
_f("everyday", "How many players does each team have on the pitch in a game of football (soccer)?", "eleven",
   "In football, each team has _ players on the pitch.", "nine|ten|twelve",
   "One of them is the goalkeeper, the only player allowed to handle the ball, and only inside the "
   "penalty area.")
_f("everyday", "What sweet food do honeybees make from flower nectar?", "honey",
   "From the nectar of flowers, honeybees make _.", "wax|jam|syrup",
   "Bees store honey to feed the colony through the winter. Because it is so low in water and "
   "slightly acidic, honey can last for a very long time without spoiling.")
_f("everyday", "How many cards are in a standard deck, not counting jokers?", "52",
   "A standard deck of playing cards has _ cards, not counting jokers.", "48|54|56",
   "There are four suits of thirteen cards each. Hearts and diamonds are red, while clubs and "
   "spades are black.")
_f("everyday", "On which side of the road do people drive in the United Kingdom?", "the left",
   "In the United Kingdom, people drive on _ side of the road.", "the right|the middle|either",
   "Other countries that drive on the left include Japan, India, Australia and South Africa. Most "
   "of the world drives on the right.")
_f("everyday", "What is a baby cat called?", "a kitten",
   "A baby cat is called _.", "a cub|a pup|a kid",
   "Kittens are born with their eyes closed and usually open them after about a week. Their eyes "
   "are often blue at first and change colour as they grow.")
_f("everyday", "On a standard six-sided die, what do the numbers on opposite faces always add up to?", "seven",
   "On a standard die, the numbers on opposite faces always add up to _.", "six|eight|twelve",
   "So one is opposite six, two is opposite five, and three is opposite four. This arrangement helps "
   "keep the die fair.")
_f("everyday", "How many years are there in a century?", "100",
   "A century is a period of _ years.", "10|50|1,000",
   "The word comes from the Latin centum, meaning one hundred. A thousand years is called a millennium.")
_f("everyday", "Which vegetable is traditionally carved into a lantern at Halloween?", "a pumpkin",
   "At Halloween, people traditionally carve faces into _.", "a melon|a cabbage|a potato",
   "In Ireland and Scotland, people once carved turnips instead. When the custom reached North "
   "America, pumpkins proved larger and much easier to carve.")
_f("everyday", "In which sport would you see a slam dunk?", "basketball",
   "The slam dunk is a move in _.", "volleyball|tennis|rugby",
   "The player jumps and forces the ball down through the hoop with one or both hands. Basketball "
   "was invented in 1891 by James Naismith, using peach baskets as goals.")
_f("everyday", "Which dried fruit is made from grapes?", "raisins",
   "Dried grapes are sold as _.", "prunes|dates|figs",
   "It takes about four kilograms of fresh grapes to make one kilogram of raisins. Prunes, by "
   "contrast, are dried plums.")
_f("everyday", "How many rings are there on the Olympic flag?", "five",
   "The Olympic flag shows _ interlocking rings.", "four|six|seven",
   "The rings stand for the inhabited continents joined together by the Games. The colours are "
   "blue, yellow, black, green and red on a white background.")
_f("everyday", "What ingredient makes bread dough rise?", "yeast",
   "Bread dough rises because of the _ in it.", "salt|flour|butter",
   "Yeast feeds on sugars in the dough and gives off carbon dioxide. The gas is trapped by the "
   "stretchy gluten, making the dough puff up like a balloon.")
_f("everyday", "How many minutes are there in an hour?", "60",
   "There are _ minutes in an hour.", "50|100|30",
   "Dividing hours into sixty parts goes back to the ancient Babylonians, who counted in sixties. "
   "The same system gives us 360 degrees in a circle.")
_f("everyday", "What do you call the practice of moving clocks forward an hour in spring?", "daylight saving time",
   "Moving the clocks forward an hour in spring is known as _.", "leap time|standard time|solar time",
   "The idea is to make better use of evening daylight in summer. In autumn the clocks go back "
   "again, which is why people say spring forward, fall back.")
_f("everyday", "What is the square root of 64?", "8",
   "The square root of 64 is _.", "6|7|16",
   "A square root is the number that gives the original number when multiplied by itself. Eight "
   "times eight is sixty-four.")


# ---------------------------------------------------------------------------
# QA helpers
# ---------------------------------------------------------------------------

TOPIC_NAME = dict(science="Science", history="History", geography="Geography",
                  language="Language", arts="Arts and literature", everyday="Everyday knowledge")
LEADS = ["Quick question.", "General knowledge.", "Here's one for you.", "Pop quiz!",
         "Test your knowledge:", "Homework help, please.", "Warm-up question.", "Let's see if you know this one."]
LETTERS = "ABCD"


class _Deck:
    """Draws facts in a shuffled cycle so that every fact gets used."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.pools: dict[str | None, list] = {}

    def draw(self, topic: str | None = None, avoid=()) -> tuple:
        pool = self.pools.get(topic)
        if not pool:
            pool = [f for f in FACTS if topic is None or f[0] == topic]
            self.rng.shuffle(pool)
            self.pools[topic] = pool
        for i, f in enumerate(pool):
            if f not in avoid:
                return pool.pop(i)
        return pool.pop()

    def draw_n(self, n: int, topic: str | None = None) -> list[tuple]:
        out: list[tuple] = []
        while len(out) < n:
            out.append(self.draw(topic, out))
        return out


def _stem(f) -> str:
    return f[3].split("_")[0].rstrip()


def _full(f, ans: str | None = None) -> str:
    return f[3].replace("_", f[2] if ans is None else ans)


def _wrongs(f) -> list[str]:
    return f[4].split("|")


def _options(rng, f) -> tuple[list[str], str]:
    opts = [f[2]] + _wrongs(f)
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(f[2])]


def _expl_cut(rng, f) -> str:
    w = f[5].split()
    k = rng.randint(3, max(3, len(w) - 2))
    return " ".join(w[:k])


def _first_sentence(f) -> str:
    return f[5].split(". ")[0].rstrip(".") + "."


def _topic(f, cap: bool = True) -> str:
    t = TOPIC_NAME[f[0]]
    return t if cap else t.lower()


_PROPER_START = {"DNA", "Julius", "Machu", "Johannes", "Christopher", "Egypt", "Russian", "Pride",
                 "Salvador", "Don", "Guernica"}


def _lc(text: str) -> str:
    """Lower-case a statement's first letter unless it starts with a proper noun."""
    return text if text.split()[0] in _PROPER_START else text[:1].lower() + text[1:]


def _short_or_full(rng, f) -> str:
    return _full(f) if rng.random() < 0.5 else _cap(f[2]) + "."


# ---------------------------------------------------------------------------
# QA frames: f(rng, deck, cls, big) -> text
# ``big`` asks for a longer prompt, usually by first showing earlier items
# that were already answered in the same format.
# ---------------------------------------------------------------------------

def _prior(rng, d, big, render, lo=2, hi=3, sep="\n\n", topic=None) -> str:
    if not big:
        return ""
    return sep.join(render(d.draw(topic)) for _ in range(rng.randint(lo, hi))) + sep


def _qa_plain(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Q: {g[1]}\nA: {_cap(g[2])}. {_first_sentence(g)}")
    f = d.draw()
    if cls == "c":
        return pre + f"Q: {f[1]}\nA: {_stem(f)}"
    if cls == "o":
        return pre + f"Q: {f[1]}\nA: {_cap(f[2])}."
    return pre + f"Q: {f[1]}\nA:"


def _qa_question_answer(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Question: {g[1]}\nAnswer: {_full(g)} {_first_sentence(g)}")
    f = d.draw()
    if cls == "c":
        return pre + f"Question: {f[1]}\nAnswer: {_stem(f)}"
    if cls == "o":
        return pre + f"Question: {f[1]}\nAnswer: {_full(f)}\n\nQuestion:"
    return pre + f"Question: {f[1]}\nAnswer:"


def _mc_block(rng, f) -> tuple[str, str]:
    opts, letter = _options(rng, f)
    return f"Question: {f[1]}\n" + "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(opts)), letter


def _qa_mc_block(rng, d, cls, big):
    def done(g):
        block, let = _mc_block(rng, g)
        return block + f"\nAnswer: {let}\nExplanation: {_first_sentence(g)}"
    pre = _prior(rng, d, big, done, 1, 2)
    f = d.draw()
    head, letter = _mc_block(rng, f)
    head = pre + head
    if cls == "c":
        return head + "\nAnswer:"
    if cls == "m":
        return head + f"\nAnswer: {letter}\nExplanation: {_expl_cut(rng, f)}"
    return head + f"\nAnswer: {letter}\nExplanation: {f[5]}"


def _mc_inline(rng, f) -> tuple[str, str]:
    opts, letter = _options(rng, f)
    return f"{f[1]} " + " ".join(f"({'abcd'[i]}) {o}" for i, o in enumerate(opts)), letter.lower()


def _qa_mc_inline(rng, d, cls, big):
    def done(g):
        line, let = _mc_inline(rng, g)
        return line + f"\nThe correct answer is ({let}). {_first_sentence(g)}"
    pre = _prior(rng, d, big, done, 1, 2)
    f = d.draw()
    line, letter = _mc_inline(rng, f)
    line = pre + line
    if cls == "c":
        return line + "\nThe correct answer is"
    if cls == "m":
        return line + f"\nThe correct answer is ({letter}), because"
    return line + f"\nThe correct answer is ({letter})."


def _qa_fewshot(rng, d, cls, big):
    n = rng.randint(4, 6) if big else rng.randint(2, 3)
    topic = rng.choice([None, rng.choice(sorted(TOPIC_NAME))])
    fs = d.draw_n(n + 1, topic)
    short = (not big) and rng.random() < 0.5
    lines = []
    for f in fs[:-1]:
        ans = _cap(f[2]) + "." if short else _full(f)
        lines.append(f"Q: {f[1]}\nA: {ans}")
    last = fs[-1]
    if cls == "c":
        lines.append(f"Q: {last[1]}\nA: {_stem(last)}")
    elif cls == "m":
        lines.append(f"Q: {last[1]}\nA:")
    else:
        lines.append(f"Q: {last[1]}\nA: {_full(last)}\n\nQ:")
    sep = "\n\n" if rng.random() < 0.5 else "\n"
    return sep.join(lines)


def _qa_explanation_cut(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Q: {g[1]}\nA: {_cap(g[2])}. {g[5]}", 1, 1)
    f = d.draw()
    lead = rng.choice(["", "", "Good question! "])
    if cls == "c":
        return pre + f"Q: {f[1]}\nA: {lead}{_cap(f[2])}. {_first_sentence(f)} In short, {_lc(_stem(f))}"
    if cls == "m":
        return pre + f"Q: {f[1]}\nA: {lead}{_cap(f[2])}. {_expl_cut(rng, f)}"
    return pre + f"Q: {f[1]}\nA: {lead}{_cap(f[2])}. {f[5]}"


def _qa_true_false(rng, d, cls, big):
    lead = rng.choice(["True or false:", "True or false?", "Decide whether this statement is true or false."])

    def item(g):
        true = rng.random() < 0.5
        return (_full(g) if true else _full(g, rng.choice(_wrongs(g)))), true

    def done(g):
        stmt, true = item(g)
        return f"{lead} {stmt}\nAnswer: " + ("True." if true else f"False. {_full(g)}") + f" {_first_sentence(g)}"
    pre = _prior(rng, d, big, done, 1, 2)
    f = d.draw()
    stmt, true = item(f)
    if cls in ("c", "m"):
        return pre + f"{lead} {stmt}\nAnswer:"
    verdict = "True." if true else f"False. {_full(f)}"
    return pre + f"{lead} {stmt}\nAnswer: {verdict}"


def _qa_fill_blank(rng, d, cls, big):
    head = "Fill in the blank"
    if big:
        fs = d.draw_n(rng.randint(4, 6))
        lines = [f"{i + 1}. {g[3].replace('_', '____')} ({g[2]})" for i, g in enumerate(fs[:-1])]
        f = fs[-1]
        k = len(fs)
        intro = "Fill in each blank. The answers to the first few are given in brackets.\n"
        if cls == "c":
            return intro + "\n".join(lines) + f"\n{k}. {_stem(f)}"
        if cls == "m":
            return intro + "\n".join(lines) + f"\n{k}. {f[3].replace('_', '____')} ("
        return intro + "\n".join(lines) + f"\n{k}."
    f = d.draw()
    blank = f[3].replace("_", "____")
    if cls == "c":
        return f"{head}: {blank}\nAnswer:"
    if cls == "m":
        return f"{head} ({_topic(f, False)}): {blank}\nAnswer: {f[2]}\nWhy:"
    return f"{head}: {blank}\nAnswer: {f[2]}\n\nNext one."


def _qa_trivia_night(rng, d, cls, big):
    n = rng.randint(1, 8)
    q = rng.randint(2, 10)
    f = d.draw()
    pre = ""
    if big:
        g = d.draw()
        pre = (f"Quizmaster: Right, everyone, pens down for a second. That was question {q - 1}: {g[1]} "
               f"The answer is {g[2]}. {_first_sentence(g)} Okay, scores on the board at the break.\n")
    head = f"Trivia night, round {n}: {_topic(f)}.\n{pre}Question {q}: {f[1]}"
    if cls == "c":
        return head + f"\nQuizmaster: The answer is... {_stem(f)}"
    if cls == "m":
        return head + "\nOur team's answer:"
    return head + f"\nQuizmaster: The answer is {f[2]}! {rng.choice(['Well done to table four.', 'Three teams got that one.', 'Nobody got that one.'])}"


def _qa_flashcard(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Flashcard ({_topic(g, False)})\nFront: {g[1]}\nBack: {_cap(g[2])}.\nNote: {_first_sentence(g)}")
    f = d.draw()
    head = pre + f"Flashcard ({_topic(f, False)})\nFront: {f[1]}\nBack:"
    if cls == "c":
        return head + f" {_stem(f)}"
    if cls == "m":
        return head
    return head + f" {_cap(f[2])}.\nNote:"


def _qa_teacher_student(rng, d, cls, big):
    t = rng.choice(["Teacher", "Ms. Alvarez", "Mr. Osei"])
    s = rng.choice(["Student", "Priya", "Tom"])
    pre = _prior(rng, d, big, lambda g: f"{t}: {g[1]}\n{s}: {_cap(g[2])}.\n{t}: Good. {g[5]}", 1, 1, "\n")
    f = d.draw()
    if cls == "c":
        return pre + f"{t}: {f[1]}\n{s}: {_stem(f)}"
    if cls == "m":
        return pre + f"{t}: {f[1]}\n{s}: Is it {rng.choice(_wrongs(f))}?\n{t}: Not quite. Try again.\n{s}: Oh, then it's"
    return pre + f"{t}: {f[1]}\n{s}: {_short_or_full(rng, f)}\n{t}: That's right. And can anyone tell me why?\n{s}:"


def _qa_forum(rng, d, cls, big):
    f = d.draw()
    worry = rng.choice(["My friends and I can't agree on this one.",
                        "I have always wondered about this.",
                        "This came up at dinner and nobody knew for sure.",
                        "Settle an argument for me, please."])
    extra = ""
    if big:
        w = rng.choice(_wrongs(f))
        extra = (f" My uncle insists the answer is {w}, and he has been saying it for years. I looked it up "
                 f"once but found two different answers, so I gave up. Can someone who actually knows "
                 f"explain it properly, with a source if possible?")
    head = f"Posted in Ask Anything\n\n{f[1]} {worry}{extra}\n\nTop answer:"
    if cls == "c":
        return head + f" Short version: {_stem(f)}"
    if cls == "m":
        return head
    return head + f" {_full(f)} {f[5]}\n\nReply:"


def _qa_faq(rng, d, cls, big):
    f = d.draw()
    pre = _prior(rng, d, big, lambda g: f"{g[1]}\n{_full(g)} {g[5]}", 1, 2, topic=f[0])
    head = f"Frequently asked questions: {_topic(f, False)}\n\n{pre}{f[1]}\n"
    if cls == "c":
        return head + _stem(f)
    if cls == "m":
        return head + f"{_full(f)} {_expl_cut(rng, f)}"
    return head + f"{_full(f)} {f[5]}"


def _qa_quiz_list(rng, d, cls, big):
    topic = rng.choice(sorted(TOPIC_NAME))
    n = rng.randint(6, 8) if big else rng.randint(3, 4)
    fs = d.draw_n(n, topic)
    head = f"{TOPIC_NAME[topic]} quiz\n" + "\n".join(f"{i + 1}. {f[1]}" for i, f in enumerate(fs))
    if cls == "o":
        return head + f"\n{n + 1}."
    k = rng.randint(1, n - 1)
    answers = "\n".join(f"{i + 1}. {_cap(f[2])}" for i, f in enumerate(fs[:k]))
    tail = f"\n{k + 1}."
    if cls == "c":
        tail = f"\n{k + 1}. {_stem(fs[k])}"
    return head + "\n\nAnswers:\n" + answers + tail


def _qa_did_you_know(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Did you know? {_full(g)} {g[5]}", 1, 2)
    f = d.draw()
    if cls == "c":
        return pre + f"Did you know? {_stem(f)}"
    if cls == "m":
        return pre + f"Did you know? {_full(f)} {_expl_cut(rng, f)}"
    return pre + f"Did you know? {_full(f)} {_first_sentence(f)}"


def _qa_kids_quiz(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Kids' corner quiz! {g[1]} Answer: {_cap(g[2])}! Here's a fun fact: {g[5]}", 1, 1)
    f = d.draw()
    hint = f"Here's a hint: it isn't {rng.choice(_wrongs(f))}."
    if cls == "c":
        return pre + f"Kids' corner quiz! {f[1]} {hint} Give up? {_stem(f)}"
    if cls == "m":
        return pre + f"Kids' corner quiz! {f[1]} {hint} Answer:"
    return pre + f"Kids' corner quiz! {f[1]} {hint} Answer: {_cap(f[2])}! Here's a fun fact:"


def _qa_exam(rng, d, cls, big):
    f = d.draw()
    num = rng.randint(2, 12)
    head = f"Section {rng.choice('ABC')}: short answers ({rng.randint(2, 6)} marks each)\n\n"
    if big:
        g = d.draw()
        head += ("Answer all questions in this section. Write in full sentences, and where a question "
                 "asks for a reason, marks are given for the reason as well as the answer.\n\n"
                 f"{num - 1}. {g[1]}\n\nModel answer: {_full(g)} {g[5]}\n\n")
    head += f"{num}. {f[1]} Give a reason or example to support your answer."
    if cls == "c":
        return head + f"\n\nModel answer: {_stem(f)}"
    if cls == "m":
        return head + f"\n\nModel answer: {_full(f)} {_expl_cut(rng, f)}"
    return head + "\n\nModel answer:"


def _qa_chat(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"User: {g[1]}\nAssistant: {_full(g)} {g[5]}", 1, 1, "\n")
    f = d.draw()
    if cls == "c":
        return pre + f"User: {f[1]}\nAssistant: {_stem(f)}"
    if cls == "m":
        return pre + f"User: {f[1]}\nAssistant: {_full(f)} {_expl_cut(rng, f)}"
    return pre + f"User: {f[1]}\nAssistant: {_full(f)}\nUser:"


def _qa_reveal(rng, d, cls, big):
    n = rng.randint(3, 20)
    pre = ""
    if big:
        g = d.draw()
        pre = (f"Right, let's go through the answers. Question {n - 1} was \"{g[1]}\" and the answer "
               f"is {g[2]}. {_first_sentence(g)} Give yourselves a point if you got that. ")
    f = d.draw()
    if cls == "c":
        return pre + f"And the answer to question {n}, \"{f[1]}\", is"
    if cls == "m":
        return pre + (f"And the answer to question {n}, \"{f[1]}\", is {f[2]}. If you wrote "
                      f"{rng.choice(_wrongs(f))}, you can have half a point, because")
    return pre + f"And the answer to question {n}, \"{f[1]}\", is {f[2]}. Let's move on to question {n + 1}."


def _qa_myth_fact(rng, d, cls, big):
    def myth(g):
        return _full(g, rng.choice(_wrongs(g)))
    pre = _prior(rng, d, big, lambda g: f"Myth: {myth(g)}\nFact: {_full(g)} {g[5]}", 1, 2)
    f = d.draw()
    if cls == "c":
        return pre + f"Myth: {myth(f)}\nFact: {_stem(f)}"
    if cls == "m":
        return pre + f"Myth: {myth(f)}\nFact: {_full(f)}\nWhy people get it wrong:"
    return pre + f"Myth: {myth(f)}\nFact: {_full(f)} {f[5]}"


def _qa_explain_simple(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Explain in simple terms: {g[1]}\n\nIn simple terms, {_lc(_full(g))} {g[5]}", 1, 1)
    f = d.draw()
    if cls == "c":
        return pre + f"Explain in simple terms: {f[1]}\n\nIn simple terms, {_lc(_stem(f))}"
    if cls == "m":
        return pre + f"Explain in simple terms: {f[1]}\n\nIn simple terms, the answer is {f[2]}, because"
    return pre + f"Explain in simple terms: {f[1]}\n\nIn simple terms,"


def _qa_two_people(rng, d, cls, big):
    a, b = rng.sample(["Sam", "Ana", "Jonas", "Mei", "Dev", "Ruth"], 2)
    pre = _prior(rng, d, big, lambda g: f"{a}: {g[1]}\n{b}: {_cap(g[2])}. {g[5]}\n{a}: Huh. I never knew that.", 1, 1, "\n")
    f = d.draw()
    if cls == "c":
        return pre + f"{a}: {f[1]}\n{b}: Easy. {_stem(f)}"
    if cls == "m":
        return pre + f"{a}: {f[1]}\n{b}: I'm pretty sure it's"
    return pre + f"{a}: {f[1]}\n{b}: {_cap(f[2])}, I think.\n{a}: Are you sure?\n{b}:"


def _qa_quickfire(rng, d, cls, big):
    fs = d.draw_n(rng.randint(6, 8) if big else rng.randint(2, 3))
    parts = ["Quick-fire round!"]
    for f in fs[:-1]:
        parts.append(f"{f[1]} {_cap(f[2])}.")
    last = fs[-1]
    if cls == "c":
        parts.append(f"{last[1]} {_stem(last)}")
    elif cls == "m":
        parts.append(last[1])
    else:
        parts.append(f"{last[1]} {_cap(last[2])}. And the next one:")
    return " ".join(parts)


def _choose_block(rng, f) -> tuple[str, int]:
    opts, letter = _options(rng, f)
    return (f"Choose one. {f[1]}\n" + "\n".join(f"Option {i + 1}: {o}" for i, o in enumerate(opts)),
            LETTERS.index(letter) + 1)


def _qa_choose_option(rng, d, cls, big):
    def done(g):
        block, k = _choose_block(rng, g)
        return block + f"\nCorrect option: Option {k}. {_first_sentence(g)}"
    pre = _prior(rng, d, big, done, 1, 2)
    f = d.draw()
    head, k = _choose_block(rng, f)
    head = pre + head
    if cls == "c":
        return head + "\nCorrect option: Option"
    if cls == "m":
        return head + "\nCorrect option:"
    return head + f"\nCorrect option: Option {k}."


def _qa_one_word(rng, d, cls, big):
    intro = "Answer the following question as briefly as possible."
    pre = _prior(rng, d, big, lambda g: f"{intro}\nQuestion: {g[1]}\nBrief answer: {g[2]}", 2, 3)
    f = d.draw()
    head = pre + f"{intro}\nQuestion: {f[1]}\nBrief answer:"
    if cls == "c":
        return head + f" {_stem(f)}"
    if cls == "m":
        return head
    return head + f" {f[2]}\n\n{intro}\nQuestion:"


def _qa_arrow(rng, d, cls, big):
    fs = d.draw_n(rng.randint(6, 8) if big else rng.randint(1, 3))
    lines = [f"{f[1]} -> {f[2]}" for f in fs[:-1]]
    last = fs[-1]
    if cls == "c":
        lines.append(f"{last[1]} -> {_stem(last)}")
    elif cls == "m":
        lines.append(f"{last[1]} ->")
    else:
        lines.append(f"{last[1]} -> {last[2]}\nNow write your own question:")
    return "\n".join(lines)


def _qa_tell_more(rng, d, cls, big):
    pre = _prior(rng, d, big, lambda g: f"Q: {g[1]}\nA: {_cap(g[2])}.\nQ: Can you tell me a bit more?\nA: {g[5]}", 1, 1)
    f = d.draw()
    follow = rng.choice(["Can you tell me a bit more?", "Why is that interesting?", "Anything else worth knowing?"])
    head = pre + f"Q: {f[1]}\nA: {_cap(f[2])}.\nQ: {follow}\nA:"
    if cls == "c":
        return head + f" Sure. {_first_sentence(f)} So, to repeat, {_lc(_stem(f))}"
    if cls == "m":
        return head + f" {_expl_cut(rng, f)}"
    return head


def _qa_is_it_true(rng, d, cls, big):
    def ask(g):
        return f"Is it true that {_lc(_full(g, rng.choice(_wrongs(g))))[:-1]}?\nNo."
    pre = _prior(rng, d, big, lambda g: f"{ask(g)} {_full(g)} {g[5]}", 1, 1)
    f = d.draw()
    head = pre + ask(f)
    if cls == "c":
        return head + f" {_stem(f)}"
    if cls == "m":
        return head + f" {_full(f)}"
    return head + f" {_full(f)} {f[5]}"


def _qa_worksheet(rng, d, cls, big):
    topic = rng.choice(sorted(TOPIC_NAME))
    fs = d.draw_n(rng.randint(4, 6) if big else rng.randint(2, 3), topic)
    head = (f"Name: ____________ Class: ______\n{TOPIC_NAME[topic]} worksheet\n"
            "Read each question carefully and write your answer on the line.")
    body = []
    for i, f in enumerate(fs[:-1]):
        body.append(f"{i + 1}. {f[1]}\nAnswer: {f[2]}")
    last = fs[-1]
    k = len(fs)
    if cls == "c":
        body.append(f"{k}. {last[1]}\nAnswer: {_stem(last)}")
    elif cls == "m":
        body.append(f"{k}. {last[1]}\nAnswer:")
    else:
        body.append(f"{k}. {last[1]}\nAnswer: {last[2]}\n{k + 1}.")
    return head + "\n" + "\n".join(body)


QA_FRAMES = [
    _qa_plain, _qa_question_answer, _qa_mc_block, _qa_mc_inline, _qa_fewshot, _qa_explanation_cut,
    _qa_true_false, _qa_fill_blank, _qa_trivia_night, _qa_flashcard, _qa_teacher_student, _qa_forum,
    _qa_faq, _qa_quiz_list, _qa_did_you_know, _qa_kids_quiz, _qa_exam, _qa_chat, _qa_reveal,
    _qa_myth_fact, _qa_explain_simple, _qa_two_people, _qa_quickfire, _qa_choose_option, _qa_one_word,
    _qa_arrow, _qa_tell_more, _qa_is_it_true, _qa_worksheet,
]


def _lead(rng: random.Random) -> str:
    return rng.choice(LEADS)


def generate_qa() -> list[dict]:
    rng = random.Random(SEED + 1)
    deck = _Deck(rng)
    out: list[dict] = []
    seen: set[str] = set()
    i = tries = 0
    while len(out) < TARGET:
        tries += 1
        if tries > 50 * TARGET:
            raise RuntimeError("qa generator could not reach its target")
        cls = "cmo"[i % 3]
        fn = QA_FRAMES[(i // 3 + (tries - i)) % len(QA_FRAMES)]
        big = rng.random() < 0.3
        text = _clean(fn(rng, deck, cls, big))
        if _words(text) < 10:
            text = _lead(rng) + " " + text
        if not _ok(text) or _norm(text) in seen:
            continue
        seen.add(_norm(text))
        out.append({"source": "qa", "text": text})
        i += 1
    return out


def generate() -> list[dict]:
    """All fiction records, then all qa records, in a fixed order."""
    return generate_fiction() + generate_qa()
