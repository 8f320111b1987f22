"""The scripted conversation the demo streams: Maya talks to her assistant for eight weeks.

Five topics come back again and again (her sourdough, a Kyoto trip, a service hitting HTTP 429,
marathon training, her cat's diet), with small talk in between that is never worth recalling.
Each turn is ``(topic, question, answer)``; topic ``"chat"`` marks small talk.
"""

from __future__ import annotations

TURNS: tuple[tuple[str, str, str], ...] = (
    (
        "bread",
        "My sourdough came out dense and flat again. What am I doing wrong?",
        "Your starter is probably under-fermented: feed it twice a day and bake when it doubles.",
    ),
    (
        "kyoto",
        "I'm going to Kyoto in April. Which neighbourhood should I stay in?",
        "Stay near Gion or Higashiyama: walkable temples, and the cherry blossoms along the canal.",
    ),
    (
        "http",
        "Our billing service keeps getting HTTP 429 from the payments API.",
        "429 means rate limited: retry with exponential backoff and honour the Retry-After header.",
    ),
    ("chat", "Good morning! How are you today?", "Good morning! Ready when you are."),
    (
        "run",
        "I signed up for the Berlin marathon. How many runs a week should I do?",
        "Four runs a week: one long run, one tempo run and two easy runs; raise mileage 10% a week.",
    ),
    (
        "cat",
        "Miso, my cat, was told by the vet to lose weight. What should she eat?",
        "Measured portions of a high-protein wet food, about 200 kcal a day, and no free feeding.",
    ),
    ("chat", "Thanks, that's all for now.", "You're welcome, talk soon."),
    (
        "bread",
        "How long should I proof the dough after shaping it?",
        "Cold-proof the shaped loaf in the fridge for 12 to 16 hours; bake straight from cold.",
    ),
    ("chat", "It's raining again here, ugh.", "Sounds like a good day to stay in."),
    (
        "http",
        "Should the payment retries have a cap? We retried forever last night.",
        "Yes: cap at five attempts with jitter, then fail the job and alert; never retry forever.",
    ),
    (
        "kyoto",
        "Is it worth getting a rail pass for the Kyoto trip?",
        "For Tokyo to Kyoto and back a pass rarely pays off; buy Shinkansen tickets and an ICOCA card.",
    ),
    ("chat", "Do you like jazz?", "I can't listen, but I can recommend some albums."),
    (
        "run",
        "My knee hurts after the long run on Sunday. Should I keep training?",
        "Rest two days, swap the next long run for cycling, and see a physio if it persists.",
    ),
    (
        "cat",
        "Miso is begging for food all evening now. Any tricks?",
        "Split her daily ration into four small meals and use a puzzle feeder in the evening.",
    ),
    (
        "bread",
        "What hydration should I use for a more open crumb in my sourdough?",
        "Go to 75% hydration with strong bread flour, and add stretch-and-folds in the first two hours.",
    ),
    ("chat", "Haha, you're funny.", "I try!"),
    (
        "http",
        "The payments API returned 429 again even with backoff. Why?",
        "Several workers share one quota: add a shared token-bucket limiter in front of the client.",
    ),
    (
        "kyoto",
        "Which temples in Kyoto should I see first, and when?",
        "Fushimi Inari at sunrise before the crowds, then Kiyomizu-dera; book Saiho-ji in advance.",
    ),
    ("chat", "What day is it today?", "It's Thursday."),
    (
        "run",
        "What should I eat before a long training run?",
        "A carb-rich breakfast two to three hours before: oats, banana, honey; gels every 45 minutes.",
    ),
    (
        "cat",
        "Is dry food bad for Miso's diet?",
        "Dry food is calorie dense; if you keep some, weigh it, and favour wet food for hydration.",
    ),
    ("chat", "Ok cool.", "Anything else?"),
    (
        "bread",
        "My starter smells like nail polish remover. Is it dead?",
        "It's hungry, not dead: that acetone smell means it needs more frequent feeds.",
    ),
    (
        "kyoto",
        "Where can I see geisha in Kyoto respectfully?",
        "Walk Hanamikoji in Gion at dusk, keep your distance, and never block or photograph them.",
    ),
    (
        "http",
        "Can we spread payment requests so we don't hit the rate limit at midnight?",
        "Yes: queue the midnight batch and drain it at the API's rate, spreading jobs over the hour.",
    ),
    ("chat", "I'm bored.", "Want a fun fact about octopuses?"),
    (
        "run",
        "How do I taper in the weeks before the marathon?",
        "Cut volume by 20%, 40% and 60% over the last three weeks while keeping some pace work.",
    ),
    ("chat", "Never mind.", "No problem."),
    (
        "cat",
        "Miso lost half a kilo! How fast should a cat lose weight?",
        "About 1% of body weight per week is safe; faster risks liver disease, so keep it slow.",
    ),
    (
        "bread",
        "Why does my sourdough crust get so pale?",
        "Bake in a preheated Dutch oven at 250 C, lid on for 20 minutes, then lid off to brown.",
    ),
    (
        "http",
        "Our 429 errors are back after the deploy. What did we break?",
        "Check that the deploy kept the shared limiter config; new pods without it burst the quota.",
    ),
    ("chat", "Hello again!", "Hi! What's up?"),
    (
        "kyoto",
        "What's a good day trip from Kyoto in April?",
        "Nara for the deer and Todai-ji, 45 minutes by the Kintetsu line; go early.",
    ),
    (
        "run",
        "Is it bad that I slowed down a lot in the last 10k of my long run?",
        "Common: it's fuelling and pacing; start long runs 30 seconds per km slower than goal pace.",
    ),
    ("chat", "What's your favourite colour?", "Blue, if I had to choose."),
    (
        "cat",
        "Can Miso have treats while she's dieting?",
        "Yes, under 10% of daily calories: freeze-dried chicken bits are a good low-calorie treat.",
    ),
    (
        "bread",
        "Can I use whole wheat flour in my sourdough?",
        "Swap in up to 30% whole wheat and add 5% more water; it ferments faster, so watch the dough.",
    ),
    (
        "kyoto",
        "Do I need cash in Kyoto or are cards fine?",
        "Carry some cash: many temples and small restaurants still don't take cards.",
    ),
    ("chat", "lol", ":)"),
    (
        "http",
        "Should we ask the payments provider to raise our rate limit?",
        "Yes, after you've added the limiter: send them your peak request rate and the 429 logs.",
    ),
    (
        "run",
        "What shoes should I race the marathon in?",
        "Race in shoes you've done at least two long runs in; never try new shoes on race day.",
    ),
    (
        "cat",
        "Miso throws up after eating the wet food too quickly. Help?",
        "Use a slow-feeder bowl and serve smaller portions more often; see the vet if it continues.",
    ),
    ("chat", "Bye for today.", "Bye!"),
    (
        "bread",
        "How do I get the big ear on my sourdough loaf?",
        "Score at a shallow 30-degree angle, one decisive cut, on a well-tensioned cold loaf.",
    ),
    (
        "kyoto",
        "Any tips to avoid the crowds at Kyoto temples in cherry blossom season?",
        "Arrive at opening time, visit popular spots on weekdays, and see the lesser-known Daigo-ji.",
    ),
    (
        "http",
        "How should we test the retry logic for 429 responses?",
        "Use a fake payments server that returns 429 with Retry-After and assert the backoff schedule.",
    ),
    (
        "run",
        "How much water should I drink during the marathon?",
        "Drink to thirst, roughly 400 to 800 ml per hour, and add electrolytes after the first hour.",
    ),
    ("chat", "Nice weather finally.", "Enjoy it!"),
    (
        "cat",
        "How often should Miso be weighed during the diet?",
        "Every two weeks on the same scale, at the same time of day; log it for the vet.",
    ),
    (
        "bread",
        "My sourdough tastes too sour. How do I make it milder?",
        "Use a younger starter, shorten the cold proof and keep the dough warmer during bulk.",
    ),
    (
        "kyoto",
        "What food should I try in Kyoto?",
        "Yudofu near Nanzen-ji, kaiseki if you can, and matcha sweets in Uji.",
    ),
    (
        "http",
        "Is it safe to retry a payment request after a 429?",
        "Yes if you send an idempotency key, so a retried charge can never be applied twice.",
    ),
)

# The same turns, each topic's questions in the same order, but the topics emerge one after
# another and come back within a few turns: c = chat, b = bread, k = kyoto, h = http, r = run,
# a = cat. Here a plain window (FIFO) already holds what is asked next.
_EMERGING = "cbkcbkcbkchcbhkchbckhcrachracbrackrahbkcrahbkcrahrac"
_TOPIC = {"c": "chat", "b": "bread", "k": "kyoto", "h": "http", "r": "run", "a": "cat"}


def _emerging(turns: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    queues: dict[str, list[tuple[str, str, str]]] = {}
    for turn in turns:
        queues.setdefault(turn[0], []).append(turn)
    return tuple(queues[_TOPIC[letter]].pop(0) for letter in _EMERGING)


#: scenario name -> turns. "recurring": five topics cycle, each back after ~8 turns (more than a
#: small memory holds); "emerging": topics appear one by one and recur within a few turns.
SCENARIOS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "recurring": TURNS,
    "emerging": _emerging(TURNS),
}
