class Animal:
    sound = "..."

    def __init__(self, name):
        self.name = name

    def speak(self):
        return f"{self.name} says {self.sound}"


class Dog(Animal):
    sound = "woof"


class Cat(Animal):
    def speak(self):
        return super().speak().upper()


pets = [Dog("rex"), Cat("tom"), Animal("blob")]
lines = [p.speak() for p in pets]
print(lines)
