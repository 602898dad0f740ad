"""People's reasons for a product, per product type: who it is for, where it goes, when and why it is used.

What lives here: :data:`NEEDS` (product noun → ``|``-separated need phrases, each read after the product
words: "a face serum *for the dark spots on my cheeks*") and :func:`need_phrase`.

Why (issue 45): the original's human goals use ~5,500 distinct words per 5,000 instructions, most of them
about the product and what it is wanted for ("a grey sectional sofa for my living room", "styling cream
... for short hair"). The generated catalogue has 78 product types, so its product words alone cannot
reach that; people's need contexts can, in the words people use for that kind of product. A need phrase
asks for nothing the reward checks: no option value, colour, number or attribute of the product type
(tests/test_webshop_language_vary.py checks every phrase against the catalogue's vocabulary).
"""

from __future__ import annotations

import re
from typing import Any

NEEDS: dict[str, str] = {
    # beauty
    "shampoo": "for my teenage son's greasy scalp|for my thinning hair after pregnancy|for my husband's beard too|"
    "for my swim team daughter|since chlorine wrecks my hair|for after hot yoga|for my frizzy curls in humid weather|"
    "for the guest shower|to keep at my boyfriend's place|for my itchy flaky scalp|for my toddler's tangles|"
    "for hair that gets limp by noon",
    "face moisturizer": "for my combination skin|for under my makeup|for flaky patches around my nose|"
    "for my dad who never uses any|for dry cabin air on flights|for after shaving|for my rosacea-prone cheeks|"
    "for harsh prairie winters|for my teenager's breakouts|to wear under a ski mask|for my post-peel skin|"
    "that my dermatologist would approve",
    "lipstick": "for my sister's bridal party|for a job interview|for a night at the theater|for my prom|"
    "for date night|for my warm undertone|for photos at the gala|for my cosplay costume|for a drag show|"
    "for everyday errands|for my mother's eightieth|for the office holiday party",
    "eyeshadow palette": "for my hooded eyes|for a beginner learning to blend|for my quinceanera|"
    "for festival looks|for my niece who loves makeup tutorials|for stage makeup at recitals|"
    "for dramatic looks at concerts|for my wedding guests|for my hazel eyes|for travel touchups|"
    "for a makeup artist kit|for my drama club",
    "hair dryer": "for my thick coarse hair|for a dorm bathroom|for my daughter's ballet buns|for a salon station|"
    "for my poodle after baths|for the hotel-style guest bath|for my wavy bob|for quick mornings before school|"
    "to replace one that smells burnt|for my gym locker|for my fine flyaway hair|for a traveling hairstylist",
    "nail polish": "for my bridesmaids|for a spa night with friends|for my pedicure kit|for a sleepover manicure|"
    "for my nail art hobby|for short bitten nails|for the beach trip|for a mani before the wedding|"
    "for my granddaughter's birthday|for my salon clients|for brittle nails|for a quick touchup",
    "body lotion": "for my cracked heels|for after my shower|for elbows and knees|for my eczema patches|"
    "for my nana's papery skin|for the hospital break room|for my tattoo aftercare|for windburned hands|"
    "for long shifts of handwashing|for desert hiking trips|for my kids after bath time|for my itchy shins",
    "eau de parfum": "for my fiancee|for a first date|for my mother-in-law|for my wife's fortieth|for the opera|"
    "for my signature scent|for a romantic getaway|for a job interview|for my girlfriend who loves florals|"
    "for weddings this season|for our honeymoon|for my aunt in paris",
    "electric toothbrush": "for my braces|for my receding gums|for my grandfather's arthritis|for my teenager|"
    "for sensitive teeth after whitening|to pack in my carry-on|for my dentist's advice|for my college roommate|"
    "for the guest bathroom|for plaque buildup|for my husband who brushes too hard|for after my implants",
    "sunscreen": "for my toddler at the splash pad|for surfing|for marathon training|for my bald head|"
    "for tennis lessons|for my fair freckled skin|for golf rounds|for my lifeguard job|for ski slopes|"
    "for gardening afternoons|for soccer tournaments|for our trip to cancun",
    "hair extensions": "for my wedding updo|for thin ponytails|for a photoshoot|for my prom hairstyle|"
    "for a costume party|for adding volume to short hair|for my salon clients|for a music video|"
    "for my sister's quinceanera|for a pageant|for braids|for the holiday party",
    "men's razor": "for my son's first shave|for sensitive neck skin|for my dad's stubble|for ingrown hairs|"
    "for my gym bag|for shaving my head|for a clean look at interviews|for my boyfriend's coarse beard|"
    "for travel kits|for my grandpa's shaky hands|for quick morning routines|for my barbershop",
    "liquid foundation": "for my acne scars|for oily summer days|for wedding photos|for my mature skin|"
    "for a news anchor job|for stage lights|for my redness around the nose|for long shifts at the hospital|"
    "for my graduation photos|for a humid climate|for my drag persona|for sweaty dance rehearsals",
    "face serum": "for the dark spots on my cheeks|for crow's feet|for my sun damage|for dullness after winter|"
    "for my acne marks|for my fiftieth birthday|for clogged pores|for my nighttime routine|"
    "for a tired complexion|for my mom's wrinkles|for uneven texture|for melasma",
    # fashion
    "women's sandals": "for a beach vacation|for my bunions|for a summer wedding|for walking around europe|"
    "for my pedicured toes|for brunch with friends|for the boardwalk|for my swollen feet in summer|"
    "for a cruise|for a resort trip|for my maid of honor duties|for farmers market mornings",
    "men's t-shirt": "for my brother who lifts|for lounging at home|for a family reunion|for hot warehouse shifts|"
    "for layering under flannel|for my husband's birthday|for a camping weekend|for coaching practice|"
    "for my teenage son|for a casual friday|for painting the house|for a road trip",
    "women's dress": "for a beach wedding|for my graduation|for a cocktail party|for church on sunday|"
    "for a baby shower|for a garden party|for my rehearsal dinner|for a work conference|"
    "for a first date|for a cruise dinner|for my cousin's engagement|for a funeral",
    "running shoes": "for my flat feet|for trail races|for my first half marathon|for plantar fasciitis|"
    "for treadmill workouts|for my chunky feet|for cross country season|for my daughter's track team|"
    "for long nursing shifts|for walking the dog|for bunions|for a charity five k",
    "yoga pants": "for hot yoga|for pilates class|for lounging on weekends|for my pregnancy|for barre classes|"
    "for my teenager's dance team|for running errands|for long flights|for a yoga retreat|"
    "for my curvy figure|for aerial silks|for postpartum workouts",
    "men's jacket": "for my commute on a scooter|for ski trips|for chicago winters|for a rainy trip to seattle|"
    "for my son's college campus|for hunting season|for dog walks at dawn|for football games|"
    "for layering over a hoodie|for my dad's birthday|for motorcycle rides|for fishing trips",
    "women's wallet": "for my mom's birthday|for a minimalist purse|for my teenage daughter|for travel abroad|"
    "for my credit cards and cash|for a crossbody bag|for my nurse friend|for graduation|"
    "for a clutch on nights out|for my coins and receipts|for my grandmother|for secret santa",
    "men's jeans": "for my tall husband|for construction work|for my skinny teenage son|for a country concert|"
    "for horseback riding|for a casual office|for my dad who hates shopping|for long road trips|"
    "for my athletic thighs|for a western themed party|for weekend chores|for a date night",
    "women's cardigan": "for a chilly library|for my grandmother|for layering over dresses|for airplanes|"
    "for teaching in a cold classroom|for autumn walks|for my nursing home visits|for the office aircon|"
    "for a book club|for my maternity wardrobe|for cozy weekends|for a fall photoshoot",
    "baby bodysuit": "for my infant nephew|for a baby shower gift|for my preemie|for a coming home outfit|"
    "for daycare|for my grandbaby|for hospital bag packing|for a summer baby|for the first photos|"
    "for my friend's twins|for a gender reveal|for everyday diaper changes",
    "men's belt": "for my husband's suit|for my son's graduation|for dress slacks|for a wedding|"
    "for my work uniform|for a job interview|for cowboy boots outfits|for my dad's father's day|"
    "for golf outings|for my boyfriend who lost weight|for everyday jeans|for a formal gala",
    "pendant necklace": "for my wife's anniversary|for my daughter's sweet sixteen|for my bridesmaids|"
    "for my mom's birthday|for a first communion|for my girlfriend|for valentine's|for a graduation gift|"
    "for my grandma|for a push present|for a memorial|for my best friend's wedding",
    "men's socks": "for my boots at work|for hiking|for sweaty feet|for my diabetic dad|for dress shoes|"
    "for basketball|for standing all day|for my husband's stocking|for winter camping|for long flights|"
    "for my teenage son|for cycling",
    "one piece swimsuit": "for swim laps|for a beach vacation|for my curvy body|for water aerobics|"
    "for a cruise|for my tummy|for surfing lessons|for the community pool|for my honeymoon|"
    "for lifeguarding|for a water park|for postpartum",
    "women's watch": "for my mom|for nursing shifts|for a graduation gift|for my wife's anniversary|"
    "for everyday wear|for my daughter's first job|for a formal event|for my sister|for travel|"
    "for my girlfriend|for a retirement gift|for the office",
    "kids sneakers": "for my son's first grade|for recess|for my toddler's first steps|for soccer practice|"
    "for the school uniform|for my daughter who outgrows everything|for playground days|for summer camp|"
    "for my nephew|for gym class|for back to school|for my twins",
    # grocery
    "whole bean coffee": "for my new grinder|for cold brew|for the office break room|for my dad who roasts|"
    "for a caffeine lover's gift|for my cafe|for pour over|for early shifts|for camping mornings|"
    "for my moka pot|for a brunch party|for my aeropress",
    "protein bar": "for after crossfit|for my lunch box|for hiking trips|for my diabetic mom|for long shifts|"
    "for road trips|for my teenage athlete|for my weight loss plan|for busy mornings|for my gym bag|"
    "for between meetings|for marathon training",
    "green tea": "for my afternoon break|for weight loss|for my grandma|for a tea party|for studying late|"
    "for my office desk|for calming down before bed|for my meditation practice|for hosting friends|"
    "for iced tea in summer|for my tea obsessed friend|for my detox plan",
    "hot sauce": "for my chili cookoff|for burrito night|for my brother who loves spicy food|for wings night|"
    "for breakfast burritos|for my food truck|for a stocking stuffer|for super bowl parties|"
    "for my ramen|for our cookout|for my dad's birthday|for game day",
    "almond butter": "for my keto diet|for my kids' sandwiches|for smoothie bowls|for oatmeal|"
    "for my plant-based roommate|for baking cookies|for my lunch box|for hiking snacks|for my paleo plan|"
    "for apple slices|for post workout|for my toddler",
    "beef jerky": "for road trips|for my hunting trip|for camping|for my keto diet|for a long hike|"
    "for my husband's stocking|for my truck|for fishing trips|for my son at college|for gaming nights|"
    "for deployment care packages|for my office drawer",
    "granola": "for my yogurt|for breakfast on the go|for my kids' lunch boxes|for trail snacks|"
    "for my acai bowls|for the office pantry|for my dairy-averse friend|for brunch|for my diabetic dad|"
    "for a picnic|for snacks at soccer|for my pantry",
    "sparkling water": "for my office fridge|for a party|for quitting soda|for my mocktails|"
    "for hot summer days|for my lunch box|for a baby shower|for the gym|for game night|"
    "for road trips|for a cookout|for my book club",
    "olive oil": "for my salads|for dipping bread|for my restaurant|for cooking pasta|for my italian grandma|"
    "for roasting vegetables|for a housewarming gift|for my mediterranean diet|for frying|"
    "for homemade pesto|for my bakery|for a cooking class",
    "kettle chips": "for my lunch box|for a party|for game day|for the office|for road trips|for a picnic|"
    "for movie night|for my kids' snacks|for a cookout|for sandwiches|for a tailgate|for camping",
    "dark chocolate bar": "for my wife|for baking brownies|for a valentine's gift|for my sweet tooth|"
    "for a dessert tasting|for my teacher|for stocking stuffers|for my keto plan|for hiking snacks|"
    "for my grandmother|for a movie night|for a thank you gift",
    "pasta": "for a family dinner|for my italian night|for meal prep|for my kids|for a potluck|"
    "for my restaurant|for date night|for my food pantry donation|for a dinner party|"
    "for my college student|for camping meals|for a church supper",
    "coffee pods": "for my office keurig|for my dorm|for early mornings|for my dad|for guests|"
    "for my break room|for my rv|for a caffeine addict|for my hotel room|for my parents|"
    "for busy weekdays|for a gift basket",
    "seasoning blend": "for grilling steaks|for my smoker|for roasted chicken|for my food truck|"
    "for fish tacos|for my dad's cookouts|for meal prep|for popcorn|for my chili|"
    "for roasted potatoes|for camping meals|for a housewarming gift",
    "baby food pouches": "for my picky toddler|for daycare|for road trips|for my baby's first foods|"
    "for the diaper bag|for my twins|for our flight|for my nephew|for the stroller|"
    "for teething days|for the playground|for my grandson",
    # electronics
    "wireless earbuds": "for the gym|for my commute|for running|for my teenager|for zoom calls|"
    "for long flights|for my husband's birthday|for studying|for podcasts|for my morning walks|"
    "for my nursing shifts|for cycling",
    "bluetooth speaker": "for the beach|for my shower|for camping|for pool parties|for my teenager's room|"
    "for our boat|for a backyard cookout|for my dad|for my kayak|for a picnic|for my garage|for tailgating",
    "usb c cable": "for my laptop|for my car|for my nightstand|for my office|for travel|for my tablet|"
    "for my son's handheld|for my phone|for my camera|for the kitchen|for my gym bag|for my backpack",
    "phone case": "for my clumsy teenager|for my hiking trips|for my construction job|for my mom|"
    "for my daughter|for a gift|for my husband|for drops|for the beach|for my toddler who grabs it|"
    "for work|for my grandmother",
    "micro sd card": "for my dash cam|for my drone|for my gopro|for my son's console|for my trail camera|"
    "for my doorbell camera|for my tablet|for my phone|for my security camera|for my hobby electronics|"
    "for my action camera|for my baby monitor",
    "mechanical keyboard": "for coding|for my gaming setup|for my home office|for my son's birthday|"
    "for streaming|for writing my novel|for my desk|for my boyfriend|for esports|for long typing|"
    "for my dorm|for work from home",
    "office chair": "for my back pain|for long work days|for my home office|for my tall husband|"
    "for gaming|for my son's desk|for my sciatica|for my studio|for my cramped apartment|"
    "for my posture|for my reception area|for working from home",
    "bed sheet set": "for my guest room|for my daughter's dorm|for hot nights|for my rv|for my kids|"
    "for the master bedroom|for a housewarming gift|for our beach house|for my night sweats|"
    "for my airbnb|for my teenager|for our camper",
    "throw pillow cover": "for my couch|for my porch swing|for our living room|for my bedroom|"
    "for fall decor|for christmas|for my reading nook|for the patio|for a housewarming|"
    "for my daughter's room|for our sunroom|for easter",
    "bookshelf": "for my kids' room|for my home office|for my living room|for my classroom|"
    "for my records|for my dorm|for my plants|for my comic collection|for our library|"
    "for my cramped apartment|for the playroom|for my craft supplies",
    "ceramic planter": "for my succulents|for my snake plant|for my office desk|for my balcony|"
    "for my monstera|for my herb garden|for a housewarming gift|for my windowsill|for my porch|"
    "for my fiddle leaf fig|for my mom|for my orchid",
    "cast iron skillet": "for my campfire cooking|for cornbread|for my first apartment|for searing steaks|"
    "for my grandma's recipes|for baking pizza|for my induction stove|for a wedding gift|"
    "for my husband|for frying chicken|for my cabin|for breakfast",
    "air fryer": "for my tiny kitchen|for my dorm|for my family of five|for frozen fries|"
    "for my mom|for quick dinners|for my keto meals|for my rv|for chicken wings|for my apartment|"
    "for a wedding gift|for healthier cooking",
    "bath towel set": "for my guest bathroom|for our beach house|for my new home|for my airbnb|"
    "for the gym|for a wedding registry|for my kids' bathroom|for a housewarming|for the pool|"
    "for my spa|for my college student|for our cabin",
    "scented candle": "for my bathroom|for a housewarming gift|for my living room|for a spa night|"
    "for my meditation corner|for my teacher|for christmas|for my bedroom|for a baby shower|"
    "for my mom|for the dining table|for relaxation",
    "food storage containers": "for meal prep|for my lunches|for leftovers|for my pantry|for my kids' snacks|"
    "for the office fridge|for my freezer|for camping|for my baking supplies|for my dorm|"
    "for my cereal|for a bridal shower",
    "comforter set": "for my guest room|for my daughter's room|for our master bedroom|for my dorm|"
    "for my teenager|for winter|for my new apartment|for my son|for a wedding gift|for our cabin|"
    "for my airbnb|for the holidays",
    "outdoor string lights": "for my patio|for a wedding reception|for our backyard|for my balcony|"
    "for a graduation party|for our pergola|for christmas|for my porch|for camping|for a garden party|"
    "for our gazebo|for the deck",
    "robot vacuum": "for my dog hair|for my hardwood floors|for my apartment|for my cat|for my mom|"
    "for my carpet|for our kitchen|for my busy schedule|for my husky|for the living room|"
    "for my allergies|for our rental",
    "pruning shears": "for my roses|for my vegetable garden|for my hedges|for my fruit trees|for my grandpa|"
    "for bonsai|for my herb garden|for my vineyard|for shrubs|for my mom|for my landscaping job|"
    "for my bushes",
    "french press": "for my office|for camping|for my caffeine loving friend|for my kitchen|for my dorm|"
    "for cold brew|for my dad|for a housewarming|for my cabin|for guests|for my rv|for slow sundays",
    "nightstand": "for my bedroom|for my guest room|for my kids' room|for my cramped apartment|"
    "for my dorm|for my teenager|for the master bedroom|for my cabin|for my airbnb|"
    "for my new house|for my mom|for the nursery",
    "dog bed": "for my old labrador|for my puppy|for my husky|for my crate|for my senior dog|"
    "for my car|for my beagle|for the living room|for my rescue|for my corgi|for my german shepherd|"
    "for my pug",
    "chef knife": "for my culinary school|for my husband|for cutting vegetables|for my restaurant|"
    "for a wedding gift|for my kitchen|for my dad|for meal prep|for my son's first apartment|"
    "for my mom|for sushi|for carving",
    "wireless mouse": "for my laptop|for my office|for gaming|for my wrist pain|for my son's school|"
    "for travel|for my home office|for my macbook|for my wife|for my desk|for my dorm|for graphic design",
    "computer monitor": "for my home office|for gaming|for my dorm|for photo editing|for trading|"
    "for my son|for coding|for a dual screen setup|for my cramped desk|for my wife|for streaming|"
    "for zoom calls",
    "portable charger": "for camping|for my phone|for travel|for festivals|for my tablet|"
    "for emergencies|for my commute|for my daughter|for my kindle|for hiking|for my car|for long days",
    "camera tripod": "for my vlog|for real estate photos|for my youtube channel|for bird watching|"
    "for my phone|for family photos|for astrophotography|for my son|for my dslr|for travel|"
    "for weddings|for my studio",
    "streaming stick": "for my bedroom tv|for my parents|for my rv|for my dorm|for hotel stays|"
    "for my kids' playroom|for netflix|for my grandpa|for my old tv|for the guest room|for my cabin|"
    "for cutting cable",
    "smartwatch": "for running|for my mom|for monitoring my naps|for swimming|for my husband|for my teenager|"
    "for my heart rate|for cycling|for work|for my wife's birthday|for my hikes|for my gym routine",
    "soundbar": "for my living room tv|for movie nights|for my bedroom|for my basement|for gaming|"
    "for my dad|for our den|for sports|for my apartment|for my man cave|for the game room|for music",
    "laptop backpack": "for college|for my commute|for business trips|for my son|for hiking|for travel|"
    "for my daughter's school|for my nursing school|for work|for my gaming laptop|for flights|"
    "for my engineering classes",
    "game controller": "for my son|for my nephew|for my desktop|for gaming nights|for my husband|"
    "for my boyfriend|for my brother|for racing games|for my nintendo|for my daughter|for my xbox|"
    "for my steam deck",
}
"""Need phrases per product noun, people's own words for who, where, when and why."""


CATEGORY_NEEDS: dict[str, str] = {
    "beauty": "for my bachelorette weekend|since my skin freaks out in dry climates|for my spa day at home|"
    "for the humid summers in houston|for my self care sundays|for my first apartment bathroom|"
    "for my vanity drawer|for my gym duffel|for a spa gift basket|for my hospice volunteer shifts|"
    "for a carry-on bag|for my teen who just got into skincare|for my mom's recovery after chemo|"
    "for my wedding morning|for a girls' trip to nashville|for my salon's retail shelf|for a ski chalet weekend|"
    "for my bridal shower favors|since i'm pregnant and careful about ingredients|for backstage at recitals|"
    "for my menopause routine|for my boyfriend who never pampers himself|for a stocking stuffer|"
    "for my dorm bathroom caddy|for my nightly wind-down|for my glamping trip|for a makeover video|"
    "for my grandmother's nursing home|for after swimming laps|for my hotel housekeeping cart|"
    "since my old routine stopped working|for my esthetician's recommendation|for a self-care subscription box|"
    "for festival season in the desert|for cold mornings in minnesota|for my bathroom cabinet|"
    "for my fiance's groomsmen|for my beauty school kit|for a quick glow before zoom meetings",
    "fashion": "for my cousin's quinceanera|for a country music festival|for our family portraits|"
    "for a destination wedding in tulum|for my first day at a new job|for my son's homecoming dance|"
    "for a semester in london|for chilly evenings in san francisco|for my sorority formal|"
    "for a bachelor party in vegas|for commuting by subway|for my internship interviews|for a church retreat|"
    "for apple picking in october|for a hiking trip in colorado|for my bridesmaid duties|"
    "for a cruise to alaska|for my husband's reunion|for my capsule wardrobe|for a graduation ceremony|"
    "for a jazz brunch|for volunteering at the food bank|for my court appearance|for casual fridays|"
    "for the rodeo|for my grandson's christening|for a trip to disneyland|for the state fair|"
    "for my maternity photoshoot|for a theme park day|for teaching kindergarten|for a lake weekend|"
    "for my barista job|for the farmer's market|for a retirement dinner|for my nephew's bar mitzvah|"
    "for a chilly football game|for my book launch|for my dance recital|for fall foliage trips",
    "grocery": "for our church potluck|for my keto meal plan|for the teachers' lounge|for a charcuterie board|"
    "for a gluten-sensitive guest|for my dad's diabetic diet|for movie marathons|for a bridal luncheon|"
    "for the snack drawer at work|for a ski cabin pantry|for my plant-based sister-in-law|for hurricane supplies|"
    "for my college care package|for a superbowl spread|for our sailing trip|for my night shift breaks|"
    "for hiking the grand canyon|for the kids' soccer snacks|for a picnic at the lake|for ramadan iftar|"
    "for my elimination diet|for thanksgiving dinner|for my kid's classroom party|for a hospital stay|"
    "for the breakroom at the firehouse|for my nanny|for a cheese tasting night|for deployment packages|"
    "for my pantry restock|for the food pantry drive|for a baby shower brunch|for road trips to florida|"
    "for my grandparents' anniversary|for the little league concession stand|for a fourth of july party|"
    "for my low sodium diet|for my grocery delivery order|for my allergy-prone son",
    "electronics": "for my college dorm setup|for my dad who's not techy|for my rideshare car|"
    "for my podcast studio|for a long layover in denver|for the conference room|for my daughter's online classes|"
    "for my grandpa's hearing|for my home theater basement|for my remote job|for my esports team|"
    "for a christmas gift exchange|for my fishing boat|for the library makerspace|for my twitch streams|"
    "for my hospital night shifts|for a road trip across canada|for my semester abroad|for my hybrid office|"
    "for my van life setup|for my kid's science project|for my real estate showings|for my wedding vendor kit|"
    "for my sister's graduation|for a power outage|for my campervan|for my photography business|"
    "for my classroom smartboard|for my telehealth appointments|for the truck cab|"
    "for my church's livestream|for my uncle's retirement|for my architecture studio|for my lab bench|"
    "for a birthday surprise|for my mom who video calls the grandkids",
    "garden": "for our first house|for the lake cottage|for our vacation rental|for my grandma's assisted living|"
    "for my studio in brooklyn|for our new baby|for the in-law suite|for my college apartment|"
    "for a wedding registry|for our farmhouse renovation|for my cabin in the woods|for our beach bungalow|"
    "since we just moved to vermont|for my mother's retirement condo|for our basement remodel|"
    "for my tiny home|for the guest cottage|for our sunroom makeover|for our coastal decor|"
    "for my boho bedroom|for a housewarming in austin|for my airbnb listing|for my dad's workshop|"
    "for our rental property|for the teachers' lounge|for our church nursery|for my sister's bridal shower|"
    "for our camper van|for my mid-century living room|for a minimalist apartment|for our ranch house|"
    "for my rooftop terrace|for our mountain lodge|for my senior dog's corner|for our empty nest|"
    "for my roommate's birthday|for the breakroom at work|for our holiday guests",
}
"""Need phrases per catalogue category (:attr:`~.vocabulary.ProductType.category`), true of every type in it."""


PLACE_NAMES = (
    "maine", "vermont", "oregon", "arizona", "montana", "wyoming", "idaho", "nevada", "utah", "texas", "ohio",
    "iowa", "kansas", "nebraska", "kentucky", "tennessee", "alabama", "georgia", "florida", "carolina",
    "virginia", "maryland", "delaware", "michigan", "wisconsin", "minnesota", "dakota", "missouri", "arkansas",
    "louisiana", "mississippi", "oklahoma", "colorado", "new mexico", "california", "washington state",
    "alaska", "hawaii", "new jersey", "connecticut", "massachusetts", "pennsylvania", "illinois", "indiana",
    "boston", "chicago", "denver", "seattle", "portland", "phoenix", "tucson", "austin", "dallas", "houston",
    "atlanta", "miami", "orlando", "tampa", "charleston", "savannah", "nashville", "memphis", "new orleans",
    "detroit", "cleveland", "pittsburgh", "philadelphia", "baltimore", "richmond", "raleigh", "asheville",
    "san diego", "sacramento", "los angeles", "las vegas", "reno", "boise", "anchorage", "honolulu",
    "minneapolis", "milwaukee", "omaha", "tulsa", "albuquerque", "santa fe", "buffalo", "albany", "vancouver",
    "toronto", "montreal", "quebec", "banff", "mexico city", "cancun", "puerto rico", "iceland", "ireland",
    "scotland", "london", "paris", "rome", "barcelona", "lisbon", "amsterdam", "berlin", "prague", "vienna",
    "tokyo", "seoul", "bali", "sydney", "costa rica", "peru", "yosemite", "zion", "yellowstone", "acadia",
    "the ozarks", "the poconos", "the outer banks", "cape cod", "the catskills", "the smokies", "big sur",
    "spokane", "tacoma", "eugene", "bend", "flagstaff", "sedona", "scottsdale", "el paso", "san antonio",
    "galveston", "corpus christi", "lubbock", "amarillo", "wichita", "topeka", "lincoln", "des moines",
    "madison", "duluth", "fargo", "bismarck", "billings", "missoula", "bozeman", "jackson hole",
    "cheyenne", "laramie", "boulder", "aspen", "vail", "telluride", "durango", "taos", "moab", "park city",
    "provo", "ogden", "napa", "sonoma", "monterey", "santa cruz", "fresno", "bakersfield", "palm springs",
    "joshua tree", "lake tahoe", "mammoth", "juneau", "fairbanks", "maui", "kauai", "key west", "naples",
    "sarasota", "pensacola", "destin", "jacksonville", "tallahassee", "mobile", "birmingham", "huntsville",
    "chattanooga", "knoxville", "gatlinburg", "lexington", "louisville", "cincinnati", "columbus", "dayton",
    "toledo", "akron", "erie", "scranton", "harrisburg", "lancaster", "hershey", "wilmington", "annapolis",
    "norfolk", "roanoke", "charlottesville", "durham", "greenville", "myrtle beach", "hilton head",
    "jekyll island", "athens", "macon", "montgomery", "jackson", "shreveport", "baton rouge", "lafayette",
    "little rock", "fayetteville", "branson", "springfield", "kansas city", "st louis", "peoria", "rockford",
    "ann arbor", "grand rapids", "traverse city", "mackinac", "duluth harbor", "burlington", "stowe",
    "portsmouth", "bar harbor", "nantucket", "martha's vineyard", "newport", "providence", "hartford",
    "new haven", "hoboken", "princeton", "atlantic city", "ithaca", "saratoga", "rochester", "syracuse",
    "niagara falls", "ottawa", "calgary", "edmonton", "winnipeg", "halifax", "whistler", "victoria",
    "guadalajara", "oaxaca", "tulum", "belize", "jamaica", "aruba", "the bahamas", "bermuda", "madrid",
    "seville", "florence", "venice", "naples italy", "athens greece", "santorini", "istanbul", "cairo",
    "marrakech", "nairobi", "cape town", "dubai", "mumbai", "bangkok", "hanoi", "singapore", "manila",
    "kyoto", "osaka", "taipei", "melbourne", "auckland", "fiji", "patagonia", "buenos aires", "lima",
    "bogota", "cartagena", "quito", "the galapagos", "copenhagen", "stockholm", "oslo", "helsinki",
    "budapest", "krakow", "dublin", "edinburgh", "glasgow", "cornwall", "the cotswolds", "normandy",
    "provence", "tuscany", "the alps", "bavaria", "zurich", "geneva", "brussels", "bruges",
    "sioux falls", "rapid city", "deadwood", "the dakota hills", "badlands", "glacier park", "the tetons",
    "the everglades", "the keys", "daytona", "st augustine", "gainesville", "ocala", "clearwater",
    "fort myers", "boca raton", "fort lauderdale", "palm beach", "hattiesburg", "biloxi", "tupelo",
    "oxford", "starkville", "murfreesboro", "franklin", "paducah", "evansville",
    "bloomington", "fort wayne", "south bend", "kalamazoo", "lansing", "flint", "saginaw", "marquette",
    "eau claire", "la crosse", "rochester minnesota", "st paul", "bemidji", "grand forks", "minot",
    "great falls", "helena", "butte", "pocatello", "idaho falls", "coeur d'alene",
    "walla walla", "yakima", "bellingham", "olympia", "astoria", "salem", "medford", "ashland", "redding",
    "chico", "eureka", "arcata", "modesto", "stockton", "san jose", "oakland", "berkeley", "pasadena",
    "long beach", "anaheim", "riverside", "temecula", "carlsbad", "oceanside", "yuma", "prescott",
    "lake havasu", "mesa", "tempe", "las cruces", "roswell", "ruidoso", "odessa", "midland", "abilene",
    "waco", "tyler", "beaumont", "laredo", "brownsville", "mcallen", "norman", "stillwater", "enid",
    "lawrence", "manhattan kansas", "salina", "dodge city", "kearney", "grand island", "scottsbluff",
    "cedar rapids", "iowa city", "dubuque", "davenport", "sioux city", "ames", "quad cities", "champaign",
    "urbana", "joliet", "naperville", "evanston", "gary", "muncie", "terre haute", "columbia missouri",
    "joplin", "hot springs", "texarkana", "bentonville", "eureka springs", "natchez", "gulfport",
    "dothan", "tuscaloosa", "auburn", "valdosta", "augusta", "columbia", "spartanburg", "beaufort",
    "outer banks", "boone", "blowing rock", "winston-salem", "greensboro", "chapel hill", "lynchburg",
    "blacksburg", "morgantown", "wheeling", "charleston west virginia", "harpers ferry", "frederick",
    "ocean city", "rehoboth", "cape may", "lake placid", "cooperstown", "woodstock", "hudson valley",
    "long island", "the hamptons", "brooklyn", "queens", "the bronx", "staten island", "jersey shore",
    "lake george", "adirondacks", "north conway", "kennebunkport", "camden maine",
    "montpelier", "brattleboro", "northampton", "salem massachusetts", "plymouth", "worcester", "lowell",
    "mystic", "stamford", "greenwich", "grand junction", "pueblo", "colorado springs",
    "fort collins", "estes park", "steamboat", "breckenridge", "crested butte", "ouray", "silverton",
    "cody", "sheridan", "casper", "rock springs", "elko", "ely", "st george", "cedar city", "kanab",
    "page", "bisbee", "tombstone", "jerome", "marfa", "big bend", "fredericksburg", "new braunfels",
    "san marcos", "round rock", "the hill country", "lake travis", "padre island", "port aransas",
)
"""Places people name when saying where a thing is going."""

OCCUPATIONS = (
    "nurse", "teacher", "firefighter", "paramedic", "plumber", "electrician", "carpenter", "welder",
    "mechanic", "barista", "bartender", "waitress", "chef", "baker", "butcher", "farmer", "rancher",
    "veterinarian", "dentist", "pharmacist", "surgeon", "therapist", "librarian", "lawyer", "paralegal",
    "accountant", "architect", "engineer", "programmer", "photographer", "journalist", "musician",
    "drummer", "violinist", "painter", "sculptor", "florist", "hairstylist", "esthetician", "tattoo artist",
    "personal trainer", "yoga instructor", "lifeguard", "park ranger", "pilot", "flight attendant",
    "truck driver", "delivery driver", "mail carrier", "police officer", "soldier", "sailor", "coach",
    "professor", "student", "tutor", "nanny", "caregiver", "janitor", "landscaper", "roofer", "realtor",
    "banker", "cashier", "receptionist", "midwife", "doula", "chiropractor", "optometrist", "zookeeper",
    "dog groomer", "beekeeper", "brewer", "winemaker", "potter", "seamstress", "tailor", "jeweler",
    "locksmith", "surveyor", "geologist", "biologist", "chemist", "pastor", "social worker", "counselor",
    "interpreter", "translator", "actress", "dancer", "comedian", "podcaster", "streamer", "blogger",
    "anesthesiologist", "radiologist", "pediatrician", "dermatologist", "hygienist", "phlebotomist",
    "respiratory therapist", "physical therapist", "speech therapist", "occupational therapist", "dietitian",
    "coroner", "sheriff", "detective", "dispatcher", "bailiff", "judge", "notary", "auditor", "actuary",
    "economist", "statistician", "data analyst", "web designer", "animator", "illustrator", "cartoonist",
    "editor", "copywriter", "novelist", "poet", "screenwriter", "producer", "cinematographer", "stagehand",
    "roadie", "sound engineer", "dj", "choir director", "organist", "cellist", "saxophonist", "guitarist",
    "pianist", "opera singer", "ballerina", "choreographer", "magician", "clown", "stuntman", "jockey",
    "horse trainer", "dog walker", "pet sitter", "kennel worker", "groundskeeper", "arborist", "gardener",
    "fisherman", "deckhand", "lobsterman", "oysterman", "logger", "miner", "lineman", "machinist",
    "millwright", "bricklayer", "stonemason", "drywaller", "glazier", "upholsterer", "cobbler", "blacksmith",
    "woodworker", "furniture maker", "antique dealer", "auctioneer", "pawnbroker", "bookseller", "archivist",
    "curator", "docent", "tour guide", "concierge", "bellhop", "housekeeper", "valet", "sommelier",
    "line cook", "pastry chef", "caterer", "food truck owner", "barber", "manicurist", "makeup artist",
    "costume designer", "fashion designer", "model", "stylist", "interior designer", "event planner",
    "wedding planner", "officiant", "chaplain", "missionary", "rabbi", "imam", "monk", "nun",
    "crossing guard", "bus driver", "train conductor", "ferry captain", "air traffic controller",
    "mechanic's apprentice", "forklift operator", "warehouse picker", "stocker", "night auditor",
    "security guard", "bouncer", "ski instructor", "swim coach", "referee", "umpire", "golf pro",
    "climbing guide", "surf instructor", "scuba instructor", "park naturalist", "astronomer", "meteorologist",
    "hospice nurse", "school counselor", "principal", "substitute teacher", "preschool teacher", "coder",
    "sysadmin", "network engineer", "electrical engineer", "civil engineer", "nuclear engineer", "toolmaker",
    "pipefitter", "boilermaker", "ironworker", "crane operator", "heavy equipment operator", "excavator",
    "paver", "painter's assistant", "handyman", "exterminator", "chimney sweep", "window washer",
    "pool cleaner", "hvac tech", "appliance repairman", "locksmith's apprentice", "mosaic artist", "luthier",
    "piano tuner", "bookbinder", "printmaker", "engraver", "taxidermist", "embalmer", "mortician",
    "genealogist", "historian", "archaeologist", "anthropologist", "sociologist", "psychologist",
    "psychiatrist", "neurologist", "cardiologist", "oncologist", "orthodontist", "podiatrist", "audiologist",
    "paramedic trainee", "emt", "medic", "corpsman", "marine", "airman", "coast guard", "national guardsman",
    "ranch hand", "cowboy", "shepherd", "dairy farmer", "orchardist", "vintner", "greenhouse grower",
    "nurse practitioner", "physician assistant", "lab technician", "sonographer", "x-ray tech", "scrub nurse",
    "home health aide", "nursing assistant", "orderly", "medical coder", "claims adjuster", "underwriter",
    "loan officer", "bank teller", "financial planner", "stockbroker", "tax preparer", "bookkeeper",
    "office manager", "executive assistant", "recruiter", "hr manager", "project manager", "product manager",
    "ux designer", "game developer", "qa tester", "it technician", "help desk agent", "call center agent",
    "claims clerk", "court reporter", "stenographer", "public defender", "prosecutor", "probation officer",
    "corrections officer", "game warden", "wildland firefighter", "search and rescue volunteer",
    "ski patroller", "snowplow driver", "road crew flagger", "tow truck driver", "bike messenger", "courier",
    "flight nurse", "ship captain", "tugboat pilot", "harbor master", "longshoreman", "rigger",
    "oil rig worker", "wind turbine tech", "solar installer", "plasterer", "tile setter", "cabinetmaker",
    "framer", "finish carpenter", "concrete finisher", "asphalt paver", "sign painter", "muralist",
)
"""Jobs people mention when saying who a thing is for or why they need it."""

EVENTS = (
    "a family reunion", "a bachelorette weekend", "a ski trip", "a road trip", "a fishing trip",
    "a camping weekend", "a beach week", "a work conference", "a wedding", "a baby shower", "spring break",
    "a girls' weekend", "a cruise", "a business trip", "a hunting trip", "a music festival", "a honeymoon",
    "a graduation trip", "a college visit", "a church retreat", "a hiking trip", "a housewarming",
    "a golf weekend", "a family vacation", "a sailing trip", "a surf trip", "a yoga retreat", "summer camp",
    "a marathon", "a vineyard tour", "a holiday visit", "a birthday getaway", "an anniversary trip",
    "a quinceanera", "a bar mitzvah", "a bat mitzvah", "a powwow", "a luau", "a fish fry", "a crawfish boil",
    "a clambake", "a hoedown", "a gala", "a cotillion", "a debutante ball", "a regatta", "a county fair",
    "a renaissance faire", "a comic con", "a lan party", "a hackathon", "a bake sale", "a pig roast",
    "a block party", "a tailgate", "a sweet sixteen", "a retirement party", "a going-away party",
    "a vow renewal", "an elopement", "a christening", "a baptism", "a confirmation", "a seder",
    "a diwali party", "a lunar new year dinner", "an eid dinner", "a kwanzaa celebration", "a solstice party",
    "a mardi gras parade", "an oktoberfest", "a pride parade", "a homecoming game", "a prom", "a science fair",
    "a spelling bee", "a chess tournament", "a robotics competition", "a talent show", "a car show",
    "a quilt show", "a craft fair", "a flea market", "an estate sale", "a silent auction", "a charity run",
    "a polar plunge", "a century ride", "a ski race", "a sleepaway camp", "a field trip", "a mission trip",
    "a pilgrimage", "a safari", "a barge cruise", "a train journey", "a bike tour", "a walking tour",
    "a stag weekend", "a hen party", "a gender reveal", "a housewarming brunch", "a potluck", "a fundraiser",
)
"""Trips and events a purchase is for."""

HOBBIES = (
    "pottery", "woodworking", "knitting", "quilting", "crochet", "embroidery", "scrapbooking", "calligraphy",
    "birdwatching", "stargazing", "geocaching", "beekeeping", "canning", "sourdough baking", "homebrewing",
    "fly fishing", "ice fishing", "kayaking", "canoeing", "paddleboarding", "rock climbing", "bouldering",
    "mountain biking", "trail running", "triathlons", "pickleball", "racquetball", "bowling", "archery",
    "fencing", "karate", "jiu jitsu", "boxing", "kickboxing", "salsa dancing", "line dancing", "tap dancing",
    "figure skating", "snowboarding", "cross-country skiing", "snowshoeing", "scuba diving", "snorkeling",
    "sailing", "rowing", "skateboarding", "roller derby", "disc golf", "birding", "gardening", "composting",
    "foraging", "mushroom hunting", "metal detecting", "model trains", "lego building", "origami",
    "painting miniatures", "cosplay", "tabletop gaming", "chess", "crossword puzzles", "jigsaw puzzles",
    "genealogy", "photography", "film photography", "drone flying", "ham radio", "astronomy",
    "candle making", "soap making", "jewelry making", "leathercraft", "glassblowing", "weaving",
    "sewing", "upcycling furniture", "thrifting", "antiquing", "vinyl collecting", "coin collecting",
    "stamp collecting", "bonsai", "aquascaping", "terrariums", "hydroponics", "baking bread", "grilling",
    "smoking brisket", "cake decorating", "meal prepping", "juicing", "vineyard hopping", "journaling",
    "bullet journaling", "podcasting", "vlogging", "karaoke", "choir", "community theater", "improv",
    "macrame", "needlepoint", "cross-stitch", "spinning yarn", "felting", "basket weaving", "whittling",
    "wood burning", "pyrography", "lapidary", "rockhounding", "fossil hunting", "beachcombing", "falconry",
    "horseback riding", "dressage", "polo", "rodeo", "barrel racing", "mushing", "curling", "lacrosse",
    "rugby", "water polo", "badminton", "squash", "table tennis", "volleyball", "softball", "cricket",
    "ultimate frisbee", "parkour", "slacklining", "juggling", "unicycling", "roller skating", "ice hockey",
    "powerlifting", "kettlebells", "calisthenics", "spin class", "zumba", "tai chi", "qigong", "meditation",
    "sound baths", "reiki", "tarot", "astrology", "herbalism", "aromatherapy", "perfumery", "fermenting",
    "kombucha brewing", "cheesemaking", "charcuterie", "pasta making", "dumpling making", "cookoff competitions",
    "chili cookoffs", "food blogging", "restoring cars", "motorcycle touring", "rv camping", "overlanding",
    "backpacking", "thru-hiking", "peak bagging", "canyoneering", "caving", "spelunking", "hang gliding",
    "paragliding", "skydiving", "ballooning", "kitesurfing", "windsurfing", "wakeboarding", "waterskiing",
    "crabbing", "clamming", "duck hunting", "deer hunting", "trapshooting", "birdhouse building",
    "model rockets", "rc cars", "robotics", "resin printing", "electronics tinkering", "retro gaming",
    "speedrunning", "trivia nights", "escape rooms", "murder mysteries", "ballroom dancing", "swing dancing",
    "clogging", "square dancing", "bell ringing", "barbershop singing", "ukulele", "banjo", "harmonica",
    "mandolin", "fiddle", "accordion", "bagpipes", "trombone", "clarinet", "oboe", "bassoon", "tuba",
    "marching band", "drum corps", "a cappella", "songwriting", "beatmaking", "poetry slams", "bookbinding",
    "zine making", "screen printing", "linocut printing", "watercolor", "gouache", "oil painting",
    "plein air painting", "sketching", "urban sketching", "figure drawing", "pastel drawing", "mosaics",
    "leaded windows", "ceramics", "wheel throwing", "raku firing", "enameling", "silversmithing", "knife making",
    "fly tying", "lure making", "taxidermy", "decoy carving", "chainsaw carving", "furniture restoration",
    "clock repair", "watch collecting", "fountain pens", "letter writing", "penpals", "birdhouse painting",
    "succulent propagating", "orchid growing", "rose breeding", "seed saving", "permaculture", "homesteading",
    "goat keeping", "chicken keeping", "dog agility", "dog shows", "obedience trials", "horse shows",
    "show jumping", "eventing", "trail riding", "mule packing", "hot rods", "drag racing", "karting",
    "autocross", "sim racing", "flight simulators", "model airplanes", "kite flying", "bird banding",
    "wildlife photography", "macro photography", "storm chasing", "ghost hunting", "urban exploring",
    "cryptic crosswords", "sudoku", "backgammon", "mahjong", "bridge club", "poker nights", "cribbage",
    "dominoes", "bingo", "book clubs", "fan fiction", "worldbuilding", "larping", "historical reenactment",
    "civil war reenacting", "renaissance fairs", "medieval swordplay", "axe throwing", "darts", "billiards",
    "shuffleboard", "cornhole", "horseshoes", "bocce", "croquet", "lawn bowling", "sailing dinghies",
    "coastal rowing", "dragon boating", "outrigger canoeing", "freediving", "spearfishing", "surfcasting",
    "tarpon fishing", "bass fishing", "trout fishing", "noodling", "bowhunting", "turkey hunting",
    "birdhouse crafting", "gourd painting", "egg decorating", "paper quilling", "decoupage", "bead weaving",
    "tatting", "lacemaking", "rug hooking", "punch needle", "tufting", "dyeing yarn", "natural dyeing",
    "vat dyeing", "shibori", "batik", "block printing", "marbling paper", "hand lettering", "chalk art",
)
"""Hobbies people give as the reason for a purchase."""

PETS = (
    "beagle", "labrador", "golden retriever", "dachshund", "corgi", "husky", "pug", "boxer", "poodle",
    "chihuahua", "great dane", "greyhound", "whippet", "basset hound", "bloodhound", "border collie",
    "australian shepherd", "sheltie", "schnauzer", "terrier", "yorkie", "maltese", "shih tzu", "havanese",
    "pomeranian", "papillon", "bulldog", "frenchie", "rottweiler", "doberman", "mastiff", "newfoundland",
    "saint bernard", "bernese", "akita", "shiba inu", "samoyed", "malamute", "vizsla", "weimaraner",
    "pointer", "setter", "spaniel", "cocker spaniel", "springer", "retriever mix", "pit bull", "mutt",
    "rescue greyhound", "tabby", "siamese", "maine coon", "ragdoll", "persian cat", "sphynx", "bengal",
    "calico", "kitten", "parakeet", "cockatiel", "parrot", "canary", "hamster", "guinea pig", "rabbit",
    "ferret", "chinchilla", "hedgehog", "gecko", "iguana", "tortoise", "turtle", "goldfish", "betta",
    "bearded dragon", "hen", "duck", "goat", "alpaca", "pony", "donkey",
    "cavalier", "bichon", "lhasa apso", "pekingese", "westie", "scottie", "cairn terrier", "jack russell",
    "rat terrier", "boston terrier", "airedale", "bull terrier", "staffie", "catahoula", "heeler",
    "cattle dog", "great pyrenees", "leonberger", "irish wolfhound", "borzoi", "saluki", "basenji",
    "dalmatian", "pointer mix", "lab mix", "doodle", "goldendoodle", "labradoodle", "cockapoo", "maltipoo",
    "russian shorthair", "abyssinian", "scottish fold", "norwegian forest cat", "tuxedo cat", "lovebird",
    "finch", "axolotl", "hermit crab", "corn snake", "ball python", "leopard gecko", "sugar glider",
)
"""Pets people mention when a purchase is for the home they share."""

_COMPOSED = (
    "for our trip to {place}", "for {event} in {place}", "for {event}", "since i work as {a_job}",
    "for my {job} friend", "for my sister, {a_job}", "for my {job} husband", "as {a_job}",
    "for my new job as {a_job}", "for my {job} daughter", "to take to {place}", "for our {place} trip",
    "for my cousin in {place}", "for {event} to {place}", "for my retired {job} dad", "for {place}",
    "for my {hobby} hobby", "since i got into {hobby}", "for my friend who's into {hobby}",
    "for {hobby} weekends", "for my {hobby} club", "since my wife took up {hobby}", "for {hobby} class",
    "for my son's {hobby} lessons", "since i'm learning {hobby}", "for {hobby}", "for my move to {place}",
    "for our {place} cabin", "for winters in {place}", "for summers in {place}", "for my aunt in {place}",
    "since we adopted {a_pet}", "for a house with {a_pet}", "for my {pet}'s vet visits", "for our new {pet}",
    "for my {job} friend in {place}", "for {hobby} trips to {place}", "for my {job} brother in {place}",
    "for {hobby} with my {pet}", "for {a_job} who loves {hobby}", "for {hobby} season in {place}",
    "for {event} next month", "for {event} this weekend", "for {event} we're hosting", "to bring to {event}",
)
"""Templates of composed need phrases (``{place}``, ``{job}``, ``{event}``, ``{hobby}``)."""

CATEGORY_SHARE = 0.4
"""Share of the remaining need phrases drawn from the category's pool rather than the noun's own."""

COMPOSED_SHARE = 0.7
"""Share of need phrases composed from :data:`PLACE_NAMES`, :data:`OCCUPATIONS` and :data:`EVENTS`
("for a family reunion in tulsa", "since i work as a welder"): true of any product."""


def _a(word: str) -> str:
    """The article by sound: "an x-ray tech", "an hour", "a university student", "a one-man band"."""
    if re.match(r"x-|hour|honest|honou?r|heir|hvac|hr\b", word):
        return "an"
    if re.match(r"uni|use|usu|ute|uro|eu|one\b|once", word):
        return "a"
    return "an" if word[:1] in "aeiou" else "a"


def need_phrase(rng: Any, noun: str, category: str = "") -> str:
    """One need phrase for ``noun``: composed (:data:`COMPOSED_SHARE` of draws), else its own (:data:`NEEDS`)
    or, for ``category``, one of the category's (:data:`CATEGORY_NEEDS`) in :data:`CATEGORY_SHARE` of those;
    ``""`` when neither knows it."""
    if rng.u() < COMPOSED_SHARE:
        t = _COMPOSED[rng.integers(len(_COMPOSED))]
        job, pet = OCCUPATIONS[rng.integers(len(OCCUPATIONS))], PETS[rng.integers(len(PETS))]
        return t.format(place=PLACE_NAMES[rng.integers(len(PLACE_NAMES))], job=job, a_job=f"{_a(job)} {job}",
                        event=EVENTS[rng.integers(len(EVENTS))], hobby=HOBBIES[rng.integers(len(HOBBIES))],
                        pet=pet, a_pet=f"{_a(pet)} {pet}")
    own, shared = NEEDS.get(noun, ""), CATEGORY_NEEDS.get(category, "")
    pool = shared if shared and (not own or rng.u() < CATEGORY_SHARE) else own
    if not pool:
        return ""
    xs = pool.split("|")
    return xs[rng.integers(len(xs))]


__all__ = ["CATEGORY_NEEDS", "CATEGORY_SHARE", "COMPOSED_SHARE", "EVENTS", "HOBBIES", "NEEDS", "OCCUPATIONS", "PETS", "PLACE_NAMES",
           "need_phrase"]
