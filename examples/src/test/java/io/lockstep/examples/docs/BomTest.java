package io.lockstep.examples.docs;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The BOM has no parent (so that importing it pins nothing but Lockstep), so nothing keeps its version and its list
 * in step with the reactor but this: its version is the reactor's, and it manages every library artifact.
 */
class BomTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** The reactor's modules that are not libraries a user's project depends on. */
    private static final List<String> NOT_LIBRARIES = List.of("bom", "examples", "itests", "benchmarks");

    @Test
    void theBomHasTheReactorsVersionAndEveryLibrary() throws Exception
    {
        final Document root = read(ROOT.resolve("pom.xml"));
        final Document bom = read(ROOT.resolve("bom").resolve("pom.xml"));
        assertEquals(child(root.getDocumentElement(), "version"), child(bom.getDocumentElement(), "version"),
            "bom/pom.xml's version");

        final List<String> managed = new ArrayList<>();
        final NodeList dependencies = bom.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++)
        {
            final Element dependency = (Element)dependencies.item(i);
            managed.add(child(dependency, "artifactId"));
            assertEquals("${project.version}", child(dependency, "version"), child(dependency, "artifactId"));
        }
        // A module added to the reactor is a library unless it is named in NOT_LIBRARIES: the BOM must list it.
        final List<String> modules = new ArrayList<>();
        final NodeList listed = root.getElementsByTagName("module");
        for (int i = 0; i < listed.getLength(); i++)
        {
            modules.add(listed.item(i).getTextContent().trim());
        }
        modules.removeAll(NOT_LIBRARIES);
        assertEquals(new TreeSet<>(modules), new TreeSet<>(managed),
            "the artifacts the BOM manages against the reactor's library modules");
    }

    private static Document read(final Path file) throws Exception
    {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    private static String child(final Element parent, final String name)
    {
        final NodeList children = parent.getChildNodes();
        for (int i = 0; i < children.getLength(); i++)
        {
            if (children.item(i) instanceof Element e && name.equals(e.getTagName()))
            {
                return e.getTextContent().trim();
            }
        }
        throw new AssertionError(parent.getTagName() + " has no " + name);
    }
}
