// The lab's window: run controls on top; topology, records and inspector in
// three columns; byte savings, ladder and findings along the bottom. Column
// widths and the bottom height are dragged and remembered.
import { useEffect } from 'react';
import { useUi, togglePane } from './store/ui-store';
import { useLab } from './store/lab-store';
import { Toolbar } from './views/Toolbar';
import { TourHint } from './views/TourHint';
import { TopologyView } from './views/TopologyView';
import { RecordsView } from './views/RecordsView';
import { InspectorView } from './views/InspectorView';
import { SavingsView } from './views/SavingsView';
import { FindingsView } from './views/FindingsView';
import { LadderView } from './views/LadderView';
import { HelpOverlay } from './views/HelpOverlay';
import { ScenariosDialog } from './views/ScenariosDialog';
import { useScenarios } from './store/scenario-store';
import { Splitter } from './views/Splitter';
import { useShortcuts } from './views/shortcuts';
import { OpenTraceDialog, TraceBanner, TraceNotice } from './views/TracesView';
import { useTraces } from './store/trace-store';
import { ExploreView } from './views/ExploreView';
import { useExplore } from './store/explore-store';
import { GlossaryDrawer } from './views/GlossaryDrawer';
import { TourPanel } from './views/TourPanel';
import { TapLayer } from './views/TapCaptureDialog';
import { AttachLayer } from './views/AttachView';
import { ConnectionNotice } from './views/ConnectionNotice';
import { StartChoiceDialog } from './views/StartChoiceDialog';

export function App({ connected }: { connected: boolean }) {
  const theme = useUi((s) => s.theme);
  const layout = useUi((s) => s.layout);
  const panes = useUi((s) => s.panes);
  const helpOpen = useUi((s) => s.helpOpen);
  const scenariosOpen = useScenarios((s) => s.open);
  const tracesOpen = useTraces((s) => s.dialogOpen);
  const exploreOpen = useExplore((s) => s.open);
  const lastError = useLab((s) => s.lastError);
  const connection = useLab((s) => s.connection);
  useShortcuts();

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);

  const setLayout = (patch: Partial<typeof layout>) =>
    useUi.getState().set({ layout: { ...useUi.getState().layout, ...patch } });

  if (!connected) {
    return (
      <main className="no-lab">
        <h1>Relay Lab</h1>
        <p>
          This page has no connection to a lab. Start it with <code>npm start</code> and open the URL it
          prints (it carries this launch&apos;s token).
        </p>
      </main>
    );
  }

  return (
    <div
      className="app"
      ref={(el) => {
        if (!el) return;
        // A collapsed pane takes no room; its splitter stays to restore it.
        el.style.setProperty('--left', panes.topology ? `${layout.leftWidth}px` : '0px');
        el.style.setProperty('--right', panes.inspector ? `${layout.rightWidth}px` : '0px');
        el.style.setProperty('--bottom', panes.bottom ? `${layout.bottomHeight}px` : '0px');
      }}
    >
      <Toolbar />
      <div className="error-slot">
        <TourHint />
        <TraceBanner />
        <TapLayer />
        <AttachLayer />
        <TraceNotice />
        <ConnectionNotice state={connection} />
        {lastError && (
          <div className="error-bar" role="alert">
            {lastError}
            <button
              type="button"
              className="link"
              onClick={() => useLab.setState({ lastError: null })}
              aria-label="Dismiss error"
            >
              ×
            </button>
          </div>
        )}
      </div>
      <div className="workspace">
        <div className="col-left">{panes.topology && <TopologyView />}</div>
        <Splitter
          orientation="vertical"
          label="Resize topology"
          value={layout.leftWidth}
          collapsed={!panes.topology}
          onToggle={() => togglePane('topology')}
          onDrag={(dx) => setLayout({ leftWidth: clamp(layout.leftWidth + dx, 260, 700) })}
        />
        <div className="col-center">
          <RecordsView />
        </div>
        <Splitter
          orientation="vertical"
          label="Resize inspector"
          value={layout.rightWidth}
          collapsed={!panes.inspector}
          onToggle={() => togglePane('inspector')}
          onDrag={(dx) => setLayout({ rightWidth: clamp(layout.rightWidth - dx, 320, 900) })}
        />
        <div className="col-right">{panes.inspector && <InspectorView />}</div>
      </div>
      <Splitter
        orientation="horizontal"
        label="Resize bottom panels"
        value={layout.bottomHeight}
        collapsed={!panes.bottom}
        onToggle={() => togglePane('bottom')}
        onDrag={(_dx, dy) => setLayout({ bottomHeight: clamp(layout.bottomHeight - dy, 160, 640) })}
      />
      <div className="bottom">
        {panes.bottom && (
          <>
            <SavingsView />
            <LadderView />
            <FindingsView />
          </>
        )}
      </div>
      {helpOpen && <HelpOverlay />}
      {scenariosOpen && <ScenariosDialog />}
      {tracesOpen && <OpenTraceDialog />}
      {exploreOpen && <ExploreView />}
      <StartChoiceDialog />
      <GlossaryDrawer />
      <TourPanel />
    </div>
  );
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
