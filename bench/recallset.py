"""A recall set of conversations and natural-language questions, for `make bench`.

Multi-session chats between two people, stored as an agent would keep them: one file per
session (its date and speakers in the description), or one file per five turns. Each
session mentions a few life events in the speaker's words ("I finally painted that
lighthouse"); each event gets a question asked the way a person asks it, in other word
forms and often other words ("When did Maria paint a lighthouse?", "What did Tom's
children enjoy?"). Sessions also hold small talk and near-misses: the same topic said of
someone else, or wished for rather than done.

This file shares no code and no word list with the ranker (lib/gitmemfs/view/search.py):
its words are its own, chosen to read like conversation, and it is seeded, so every run
makes the same set.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

NAMES = ["Maria", "Tom", "Aisha", "Jonas", "Priya", "Diego", "Lena", "Kwame", "Sofia", "Hiro",
         "Nadia", "Owen", "Ines", "Ravi", "Greta", "Malik"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

SMALL_TALK = [
    "Hey {other}! So good to hear from you again.",
    "Hi! It has been a while, how have you been doing?",
    "Honestly things have been pretty busy but good.",
    "That sounds amazing, I'm really happy for you!",
    "Thanks so much, that means a lot to me.",
    "What have you been up to since we last talked?",
    "Not a whole lot, mostly work and family things.",
    "Haha, I know exactly what you mean.",
    "Anyway, I should probably get going soon.",
    "Talk to you soon, take care of yourself!",
    "Oh wow, I did not expect that at all.",
    "Yeah, it was a long week but we got through it.",
    "I keep meaning to call you but time just flies.",
    "Same here, let's not leave it so long next time.",
    "How is everyone at home doing these days?",
    "Everyone is fine, thanks for asking.",
]


@dataclass
class Event:
    """One kind of life event: how a speaker tells it, how someone asks about it, and
    near-misses that share its topic without being the answer."""
    told: str
    asked: str
    near: str
    things: tuple[str, ...]


EVENTS = [
    Event("I finally painted that {x} I kept talking about, it's hanging in the hallway now.",
          "When did {name} paint a {x}?",
          "I'd love to try painting a {x} one day, but I never find the time.",
          ("lighthouse", "sunrise over the lake", "portrait of my grandmother", "field of sunflowers")),
    Event("We adopted a {x} from the shelter last weekend, the kids are over the moon.",
          "What kind of animal did {name} adopt?",
          "My neighbour has a {x} and it barks all night long.",
          ("beagle puppy", "grey kitten", "pair of rabbits", "retired greyhound")),
    Event("I ran the {x} on Saturday, my legs are still sore!",
          "Which race did {name} take part in?",
          "I watched the {x} on TV, those runners are unreal.",
          ("city half marathon", "charity 10k", "trail ultramarathon", "midnight fun run")),
    Event("Big news: we moved to {x} at the end of last month.",
          "Where did {name} relocate to?",
          "My cousin keeps telling me to visit {x} some time.",
          ("Lisbon", "a small town near Denver", "the coast of Maine", "Osaka")),
    Event("My children absolutely loved the trip to the {x}.",
          "Where did {name} take the kids?",
          "There's a new {x} opening downtown next year apparently.",
          ("aquarium", "science museum", "pumpkin farm", "planetarium")),
    Event("I've started taking {x} lessons on Tuesday evenings.",
          "What instrument is {name} learning to play?",
          "My brother played the {x} in high school, badly.",
          ("cello", "piano", "saxophone", "banjo")),
    Event("I volunteered at the {x} on Sunday morning, it felt really meaningful.",
          "Where does {name} do volunteer work?",
          "Someone from the {x} called asking for donations.",
          ("food bank", "animal rescue", "community garden", "homeless shelter")),
    Event("I just finished reading {x}, I couldn't put it down.",
          "Which book did {name} read recently?",
          "My book club wants to read {x} next, have you heard of it?",
          ("The Overstory", "Educated", "Project Hail Mary", "Pachinko")),
    Event("I baked a {x} for my mom's birthday and she cried a little.",
          "What did {name} bake for their mother?",
          "I tried a {x} at the bakery on Main Street, pretty good.",
          ("lemon drizzle cake", "chocolate babka", "carrot cake", "apple pie")),
    Event("I got the job! I'm starting next week as a {x}.",
          "What is {name}'s new position?",
          "A friend of mine works as a {x} and hates the hours.",
          ("nurse practitioner", "data analyst", "middle school teacher", "sous chef")),
    Event("We went camping at {x} with the whole family, no phones for three days.",
          "When did {name} go camping?",
          "Have you ever been to {x}? I hear it's beautiful.",
          ("Yosemite", "the Lake District", "Banff", "Big Sur")),
    Event("I saw {x} live downtown, the crowd was insane.",
          "Which band did {name} see in concert?",
          "My sister is obsessed with {x}, she plays them nonstop.",
          ("Arctic Monkeys", "Fleetwood Mac", "Khruangbin", "The National")),
    Event("I planted {x} all along the back fence this spring.",
          "What did {name} plant in the garden?",
          "The shop had {x} on sale but I didn't buy any.",
          ("tomatoes", "lavender", "climbing roses", "raspberry bushes")),
    Event("I signed up for a {x} class at the community college.",
          "What course did {name} enroll in?",
          "The college sent me a flyer about a {x} class.",
          ("pottery", "Spanish", "creative writing", "photography")),
    Event("Yesterday I went to a {x} support group for the first time, everyone was so welcoming.",
          "When did {name} attend a {x} support group?",
          "A coworker mentioned a {x} support group she likes.",
          ("LGBTQ", "grief", "new parents", "caregivers")),
    Event("I fixed up my grandfather's old {x} over the winter.",
          "What did {name} restore?",
          "I saw an old {x} for sale at the flea market.",
          ("motorcycle", "sailboat", "pickup truck", "rocking chair")),
]


@dataclass
class Question:
    memory: str  # the memory's folder name
    text: str
    session: int  # the session holding the answer
    turn: int  # the turn within it (0-based)


@dataclass
class Memory:
    name: str
    speakers: tuple[str, str]
    dates: list[str]
    sessions: list[list[tuple[str, str]]]  # (speaker, words) per turn


def build(seed: int = 20261202, memories: int = 5, sessions: int = 24) -> tuple[list[Memory], list[Question]]:
    rng = random.Random(seed)
    names = NAMES[:]
    rng.shuffle(names)
    out: list[Memory] = []
    questions: list[Question] = []
    pending: list[tuple[Question, tuple[str, str]]] = []
    for m in range(memories):
        a, b = names[2 * m], names[2 * m + 1]
        mem = Memory(f"chat-{a.lower()}-{b.lower()}", (a, b), [], [])
        day, month, year = rng.randrange(1, 28), rng.randrange(12), 2023
        used: set[tuple[int, int]] = set()
        for s in range(sessions):
            mem.dates.append(f"{day} {MONTHS[month]} {year}")
            day += rng.randrange(5, 20)
            if day > 28:
                day -= 28
                month += 1
                if month == 12:
                    month, year = 0, year + 1
            turns: list[tuple[str, str]] = []
            speaker = s % 2
            for _ in range(rng.randrange(10, 18)):
                who = (a, b)[speaker]
                other = (a, b)[1 - speaker]
                turns.append((who, rng.choice(SMALL_TALK).format(other=other)))
                speaker = 1 - speaker
            # two or three events told, one or two near-misses
            for _ in range(rng.randrange(2, 4)):
                while True:
                    e, t = rng.randrange(len(EVENTS)), rng.randrange(4)
                    if (e, t) not in used:
                        used.add((e, t))
                        break
                event = EVENTS[e]
                pos = rng.randrange(1, len(turns) + 1)
                teller = rng.choice((a, b))
                told = (teller, event.told.format(x=event.things[t]))
                turns.insert(pos, told)
                pending.append((Question(mem.name, event.asked.format(name=teller, x=event.things[t]), s, pos),
                                told))
            for _ in range(rng.randrange(1, 3)):
                event = rng.choice(EVENTS)
                turns.insert(rng.randrange(1, len(turns) + 1),
                             (rng.choice((a, b)), event.near.format(x=rng.choice(event.things))))
            for q, told in pending:  # later inserts may have moved the told turn
                q.turn = next(i for i, turn in enumerate(turns) if turn is told)
                questions.append(q)
            pending.clear()
            mem.sessions.append(turns)
        out.append(mem)
    return out, questions


def files(mem: Memory, chunk: int | None) -> dict[str, str]:
    """The memory's files: one per session (chunk None) or one per `chunk` turns, each with
    frontmatter whose description names the speakers and the date; plus two pinned files."""
    a, b = mem.speakers
    out = {
        "system/persona.md": "---\ndescription: Who I am and how I help\n---\n"
                             f"I keep track of conversations between {a} and {b} and answer questions about "
                             "them. I am friendly, I remember dates, and I say when I don't know.\n",
        "system/human.md": "---\ndescription: The people I talk to\n---\n"
                           f"{a} and {b} are close friends who catch up every couple of weeks.\n",
    }
    for s, turns in enumerate(mem.sessions):
        date = mem.dates[s]
        parts = [turns] if chunk is None else [turns[i:i + chunk] for i in range(0, len(turns), chunk)]
        for p, part in enumerate(parts):
            name = f"sessions/session-{s + 1:02d}.md" if chunk is None else \
                f"sessions/session-{s + 1:02d}-part-{p + 1}.md"
            span = "" if chunk is None else f", turns {p * chunk + 1}-{p * chunk + len(part)}"
            body = "".join(f"{who}: {words}\n" for who, words in part)
            out[name] = f"---\ndescription: Conversation between {a} and {b} on {date}{span}\n---\n{body}"
    return out


def answer_file(q: Question, chunk: int | None) -> str:
    if chunk is None:
        return f"sessions/session-{q.session + 1:02d}.md"
    return f"sessions/session-{q.session + 1:02d}-part-{q.turn // chunk + 1}.md"
