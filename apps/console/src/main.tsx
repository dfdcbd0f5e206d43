import { render } from 'preact';
import { App } from './App.js';
import { browserLocale } from './i18n.js';
import './styles.css';

document.documentElement.lang = browserLocale();
render(<App locale={browserLocale()} />, document.getElementById('root')!);
