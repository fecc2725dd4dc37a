import Injection
import Services

// The composition root: the generated registrations, and one by hand.
InjectionManager.registerInjections()
InjectionManager.register(Logger.self) { Logger() }  // .ci/check-injection-check removes this line

WelcomeModel().show("fixture")
