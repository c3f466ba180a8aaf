from dataclasses import dataclass, field


@dataclass
class Ingredient:
    name: str
    grams: float


@dataclass
class Recipe:
    title: str
    serves: int
    items: list = field(default_factory=list)

    def scaled(self, people):
        factor = people / self.serves
        items = [Ingredient(i.name, round(i.grams * factor)) for i in self.items]
        return Recipe(self.title, people, items)

    @property
    def weight(self):
        return sum(i.grams for i in self.items)


pancakes = Recipe("pancakes", 4, [Ingredient("flour", 200), Ingredient("milk", 300)])
party = pancakes.scaled(6)
same = party == pancakes.scaled(6)
print(party.items[0], party.weight, pancakes.weight, same)
