"""WebShop (Yao et al. 2022) as an offline ``credit/*`` env: pages, reward, catalog, BM25 search.

- :mod:`.env` — :class:`WebShopEnv` (``credit/WebShop-v0``).
- :mod:`.pages` — the pages and their ``text`` / ``text_rich`` renderings.
- :mod:`.reward` — WebShop's reward function, rule for rule (the original's ``v2`` and ``master`` rules).
- :mod:`.catalog` — seeded generator of products and goals in WebShop's data schema (product
  families with hard negatives, streamed to any size); :mod:`.vocabulary` — its product types and
  word lists; :mod:`.lexicon` — more types, brand names, phrase pools; :mod:`.instructions` — its
  human-like instruction sentences and their language statistics.
- :mod:`.data` — processing, goals, splits, and the streaming loader for the original data files.
- :mod:`.search` — Lucene-style BM25 in numpy, shared per process and cached on disk.
- :mod:`.expert` — a privileged scripted expert.

``DIFFERENCES.md`` lists every way this env differs from the original; its scores are not
comparable to published WebShop numbers.
"""

from agentgym_credit.envs.webshop.catalog import generate_catalog
from agentgym_credit.envs.webshop.data import WebShopCatalog, load_original
from agentgym_credit.envs.webshop.env import WebShopEnv
from agentgym_credit.envs.webshop.expert import ExpertPolicy
from agentgym_credit.envs.webshop.reward import get_reward

__all__ = ["ExpertPolicy", "WebShopCatalog", "WebShopEnv", "generate_catalog", "get_reward", "load_original"]
