// <headlab-theme-toggle>: the light/dark switch.

export default {
  en: {
    'theme.auto': 'Theme: automatic',
    'theme.light': 'Theme: light',
    'theme.dark': 'Theme: dark',
    'theme.action': '{label} (activate to change)',
  },
  es: {
    'theme.auto': 'Tema: automático',
    'theme.light': 'Tema: claro',
    'theme.dark': 'Tema: oscuro',
    'theme.action': '{label} (actívelo para cambiarlo)',
  },
};
